// A local stand-in for the Knative Broker, for `npm start` and the integration
// tests: ingress accepts an event (202), every Trigger whose filters match gets
// it over HTTP in binary mode, a reply in the response is ingested again, and
// failures are retried per the Trigger's delivery spec, then dead-lettered.
// It routes by the same YAML the cluster uses (knative/base/triggers.yaml).
import express from 'express';
import { HTTP, type CloudEvent } from 'cloudevents';
import { backoffMs, isRetryable, subscribersFor, type TriggerSpec } from './filters.js';
import { SUMMARY_HEADER } from '../../functions/http.js';

export interface Delivery {
  trigger: string;
  subscriber: string;
  event: CloudEvent<unknown>;
  status: number | 'error';
  attempt: number;
  reply?: CloudEvent<unknown>;
  body?: unknown;
}

export interface LocalBrokerOptions {
  triggers: readonly TriggerSpec[];
  /** Knative Service name → URL(s) of its local endpoint(s); several are used in turn, like a Service's pods. */
  subscribers: Readonly<Record<string, string | readonly string[]>>;
  /** Called after each delivery attempt (for live output and tests). */
  onDelivery?: (d: Delivery) => void;
  onDeadLetter?: (d: Delivery) => void;
  /** Shrinks the delivery spec's backoff (tests); default 1. */
  backoffScale?: number;
}

export interface LocalBroker {
  router: express.Router;
  /** Ingest one event as the broker's ingress would. */
  publish(event: CloudEvent<unknown>): void;
  /** Resolves when no delivery is in flight or waiting for a retry. */
  idle(): Promise<void>;
  deadLetters: Delivery[];
  close(): void;
}

export function createLocalBroker(options: LocalBrokerOptions): LocalBroker {
  let inFlight = 0;
  const waiters: Array<() => void> = [];
  let closed = false;
  const timers = new Set<NodeJS.Timeout>();
  const deadLetters: Delivery[] = [];
  const scale = options.backoffScale ?? 1;

  const settle = () => {
    if (--inFlight <= 0) {
      inFlight = 0;
      waiters.splice(0).forEach((f) => f());
    }
  };

  const turn = new Map<string, number>();
  const endpointOf = (service: string): string | undefined => {
    const urls = options.subscribers[service];
    if (typeof urls === 'string' || urls === undefined) return urls;
    const i = turn.get(service) ?? 0;
    turn.set(service, i + 1);
    return urls[i % urls.length];
  };

  async function attempt(trigger: TriggerSpec, event: CloudEvent<unknown>, n: number): Promise<void> {
    const url = endpointOf(trigger.subscriber);
    const record: Delivery = { trigger: trigger.name, subscriber: trigger.subscriber, event, status: 'error', attempt: n };
    if (url) {
      try {
        const message = HTTP.binary(event);
        const res = await fetch(url, { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string });
        record.status = res.status;
        const text = await res.text();
        if (res.ok && res.headers.get('ce-type')) {
          record.reply = HTTP.toEvent({ headers: Object.fromEntries(res.headers), body: text }) as CloudEvent<unknown>;
        } else {
          // A no-reply answer has no body (Knative's filter would take it for a reply): its summary is a header.
          const summary = res.ok ? res.headers.get(SUMMARY_HEADER) : null;
          try {
            record.body = summary ? JSON.parse(summary) : text ? JSON.parse(text) : undefined;
          } catch {
            record.body = summary ?? text;
          }
        }
      } catch (err) {
        record.body = err instanceof Error ? err.message : String(err);
      }
    } else {
      record.body = `no local endpoint for Service ${trigger.subscriber}`;
    }
    options.onDelivery?.(record);
    if (record.reply) publish(record.reply);
    const ok = typeof record.status === 'number' && record.status < 300;
    if (ok || closed) return;
    const retryable = record.status === 'error' || isRetryable(record.status);
    if (retryable && n <= trigger.delivery.retry) {
      inFlight += 1;
      const t = setTimeout(() => {
        timers.delete(t);
        void attempt(trigger, event, n + 1).finally(settle);
      }, backoffMs(trigger.delivery, n) * scale);
      timers.add(t);
      return;
    }
    deadLetters.push(record);
    options.onDeadLetter?.(record);
  }

  function publish(event: CloudEvent<unknown>): void {
    if (closed) return;
    for (const trigger of subscribersFor(options.triggers, event.toJSON() as Record<string, unknown>)) {
      inFlight += 1;
      void attempt(trigger, event, 1).finally(settle);
    }
  }

  const router = express.Router();
  router.post('/', express.raw({ type: () => true, limit: 4 * 1024 * 1024 }), (req, res) => {
    try {
      const event = HTTP.toEvent({ headers: req.headers, body: Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '' });
      if (Array.isArray(event)) throw new Error('batched events are not supported');
      publish(event as CloudEvent<unknown>);
      res.status(202).end();
    } catch (err) {
      res.status(400).json({ error: `not a CloudEvent: ${err instanceof Error ? err.message : String(err)}`, status: 400 });
    }
  });

  return {
    router,
    publish,
    deadLetters,
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r))),
    close: () => {
      closed = true;
      timers.forEach(clearTimeout);
      timers.clear();
      inFlight = 0;
      waiters.splice(0).forEach((f) => f());
    },
  };
}
