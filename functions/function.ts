// The contract between the HTTP host and a function: a function says which
// triggers it takes and turns one into a response, optionally with a reply event.
import type { CloudEvent } from 'cloudevents';
import type { Trigger } from '../lib/events/types.js';

export interface FunctionResponse {
  /** 200 with a reply event, 202 without. */
  status: 200 | 202;
  /** A JSON summary of what was decided (the response body when there is no reply). */
  summary: Record<string, unknown>;
  reply?: CloudEvent<unknown>;
}

export interface SwarmFunction {
  readonly name: 'assign' | 'restart';
  accepts(trigger: Trigger): boolean;
  handle(trigger: Trigger): Promise<FunctionResponse>;
}
