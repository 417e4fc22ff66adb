// POST / : HTTP → CloudEvent → trigger → function → HTTP answer.
// The answer codes are chosen for Knative's dispatcher: bad input gets a final
// 4xx (400/413/415/422, dead-lettered, never retried); only transient failures
// get 5xx (retried with backoff); a vanished object is a 2xx no-op.
import express, { type NextFunction, type Request, type Response } from 'express';
import { HTTP, type CloudEvent } from 'cloudevents';
import { BadEventError } from '../lib/events/errors.js';
import { DEFAULT_MAX_BODY_BYTES, fromHttp } from '../lib/events/http.js';
import { toTrigger } from '../lib/events/trigger.js';
import type { Trigger } from '../lib/events/types.js';
import { isKubeError } from '../lib/kube/errors.js';
import type { Logger } from '../lib/observability/logger.js';
import type { Metrics } from '../lib/observability/metrics.js';
import { traceReconcile, traceReply } from '../lib/observability/tracing/instrumentation.js';
import type { FunctionResponse, SwarmFunction } from './function.js';

export interface EventRouteOptions {
  /** The functions this host serves. With one, events it does not take are refused (422). */
  functions: readonly SwarmFunction[];
  log: Logger;
  metrics?: Metrics;
  maxBodyBytes?: number;
}

/** The HTTP status for a failure, and whether the broker should retry. */
export function failureStatus(err: unknown): { status: number; error: string } {
  if (err instanceof BadEventError) return { status: err.status, error: err.problem };
  if (isKubeError(err, 'Transient') || isKubeError(err, 'Conflict')) return { status: 503, error: err.message };
  if (isKubeError(err)) return { status: 500, error: err.message };
  return { status: 500, error: err instanceof Error ? err.message : String(err) };
}

/** An error from our own code, not a refused event or a Kubernetes API answer. */
const isOurs = (err: unknown): boolean => !(err instanceof BadEventError) && !isKubeError(err);

/** The response header carrying a no-reply answer's summary (JSON), e.g. for `npm start`'s live view. */
export const SUMMARY_HEADER = 'swarm-summary';
/** Well under the 8–16 KiB that HTTP stacks accept for a whole header block. */
const MAX_SUMMARY_HEADER_CHARS = 4096;

/** The summary as a header value: JSON in ASCII (\uXXXX escapes), its Swarm list cut to fit. */
function summaryHeader(summary: FunctionResponse['summary']): string {
  const ascii = (value: unknown) => JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  let text = ascii(summary);
  const swarms = Array.isArray(summary.swarms) ? (summary.swarms as unknown[]) : [];
  for (let kept = swarms.length; text.length > MAX_SUMMARY_HEADER_CHARS && kept > 0; kept = Math.floor(kept / 2)) {
    text = ascii({ ...summary, swarms: swarms.slice(0, Math.floor(kept / 2)), truncated: swarms.length });
  }
  return text.length > MAX_SUMMARY_HEADER_CHARS ? ascii({ truncated: swarms.length }) : text;
}

export function eventRoute(options: EventRouteOptions) {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const router = express.Router();
  router.post('/', express.raw({ type: () => true, limit: maxBodyBytes }), async (req: Request, res: Response) => {
    const started = performance.now();
    let event: CloudEvent<unknown> | undefined;
    let fn: SwarmFunction | undefined;
    try {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      event = fromHttp(req.headers, body, { maxBodyBytes });
      const trigger = toTrigger(event);
      fn = pick(options.functions, trigger);
      const chosen = fn;
      const result = await traceReconcile(
        { functionName: chosen.name, headers: req.headers, event, ...(options.metrics ? { metrics: options.metrics } : {}), outcomeOf: outcomeLabel },
        async () => {
          const r = await chosen.handle(trigger);
          return r.reply ? { ...r, reply: traceReply(r.reply) } : r;
        },
      );
      options.log.info(
        // The subject (an ApiServerSource event's object path) says which object a log line answers.
        { event: event.id, type: event.type, ...(event.subject ? { subject: event.subject } : {}), function: chosen.name, ...result.summary, ms: Math.round(performance.now() - started) },
        'handled',
      );
      if (result.reply) {
        // The reply travels back to the broker in the response, in binary mode.
        const message = HTTP.binary(result.reply);
        res.status(200).set(message.headers as Record<string, string>).send(message.body);
        return;
      }
      // Knative's broker filter takes a 2xx answer's body as the reply event: it
      // must be empty or a CloudEvent (anything else is a 502, retried, then
      // dead-lettered). So no body; what each Swarm came to rides in a header.
      res.status(result.status).set(SUMMARY_HEADER, summaryHeader(result.summary)).end();
    } catch (err) {
      const { status, error } = failureStatus(err);
      // Reconcile failures are counted by traceReconcile; rejections never reach it.
      if (err instanceof BadEventError) {
        options.metrics?.events.inc({ function: fn?.name ?? 'none', type: event?.type ?? 'unparsed', outcome: 'rejected' });
      }
      const fields = { event: event?.id, type: event?.type, status, error, ms: Math.round(performance.now() - started) };
      if (isOurs(err)) {
        // Neither the client's fault nor the API's: a defect. Its stack goes to
        // the log (the TypeScript lines with NODE_OPTIONS=--enable-source-maps).
        options.log.error({ ...fields, err }, 'failed unexpectedly, broker will retry');
      } else if (status >= 500) options.log.warn(fields, 'failed, broker will retry');
      else options.log.info(fields, 'rejected');
      res.status(status).json({ error, status });
    }
  });
  return router;
}

function pick(functions: readonly SwarmFunction[], trigger: Trigger): SwarmFunction {
  const fn = functions.find((f) => f.accepts(trigger));
  if (fn) return fn;
  const what = trigger.source === 'swarm' ? 'assignment.changed' : trigger.source === 'ping' ? 'resync ping' : `${trigger.kind} ${trigger.verb}`;
  throw new BadEventError(422, `function ${functions.map((f) => f.name).join('/')} does not handle ${what} events: check the Trigger filters`);
}

const outcomeLabel = (r: FunctionResponse): string => {
  const results = (r.summary.swarms as Array<{ result: string }> | undefined)?.map((s) => s.result) ?? [];
  return results.length ? [...new Set(results)].sort().join('+') : 'ignored';
};

/** Express's own fallback for a route nobody serves, as JSON like every other answer. */
export function notFound(req: Request, res: Response): void {
  res.status(404).json({ error: `no route for ${req.method} ${req.path}`, status: 404 });
}

/**
 * Express error handler: the body parser's and router's client errors keep their
 * 4xx (413 over the limit, 415 unsupported encoding, 400 unreadable body or path)
 * with a JSON body; anything else is ours, a 500.
 */
export function jsonErrors(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) return next(err);
  const e = (typeof err === 'object' && err !== null ? err : {}) as { status?: number; statusCode?: number; type?: string; message?: string };
  const given = e.status ?? e.statusCode;
  const status = e.type === 'entity.too.large' ? 413 : typeof given === 'number' && given >= 400 && given < 500 ? given : 500;
  const message = e.message ?? (err instanceof Error ? err.message : String(err));
  const error = status === 413 ? `body exceeds the limit: ${message}` : status === 500 ? `internal error: ${message}` : message;
  res.status(status).json({ error, status });
}
