// Knative Trigger filters, evaluated locally exactly as the broker does for
// the dialect the manifests use: the subscriptions-API `filters` (exact,
// prefix, suffix on attribute values; all, any, not; the list ANDed), and the
// classic `filter.attributes` (exact match on every listed attribute).
// Pure, so the local path and the Knative path route by the same YAML.

export type Filter = Partial<Record<'exact' | 'prefix' | 'suffix', Record<string, string>>> & {
  all?: Filter[];
  any?: Filter[];
  not?: Filter;
};

export type EventAttributes = Readonly<Record<string, unknown>>;

export interface TriggerSpec {
  name: string;
  filters?: Filter[];
  filter?: { attributes?: Record<string, string> };
  /** The subscriber's Knative Service name. */
  subscriber: string;
  delivery: { retry: number; backoffPolicy: 'linear' | 'exponential'; backoffDelayMs: number; deadLetterSink?: string };
}

function each(values: Record<string, string>, event: EventAttributes, test: (actual: string, wanted: string) => boolean): boolean {
  return Object.entries(values).every(([name, wanted]) => {
    const actual = event[name];
    return typeof actual === 'string' && test(actual, wanted);
  });
}

export function matches(filter: Filter, event: EventAttributes): boolean {
  if (filter.exact) return each(filter.exact, event, (a, w) => a === w);
  if (filter.prefix) return each(filter.prefix, event, (a, w) => a.startsWith(w));
  if (filter.suffix) return each(filter.suffix, event, (a, w) => a.endsWith(w));
  if (filter.all) return filter.all.every((f) => matches(f, event));
  if (filter.any) return filter.any.some((f) => matches(f, event));
  if (filter.not) return !matches(filter.not, event);
  return true;
}

/** Knative: when `filters` is set it wins over the classic `filter`. */
export function triggerMatches(trigger: TriggerSpec, event: EventAttributes): boolean {
  if (trigger.filters && trigger.filters.length > 0) return trigger.filters.every((f) => matches(f, event));
  const attributes = trigger.filter?.attributes ?? {};
  return Object.entries(attributes).every(([name, wanted]) => wanted === '' || event[name] === wanted);
}

export const subscribersFor = (triggers: readonly TriggerSpec[], event: EventAttributes): TriggerSpec[] =>
  triggers.filter((t) => triggerMatches(t, event));

/** ISO 8601 durations as Knative writes them (PT0.5S, PT2S, PT1M). */
export function durationMs(iso: string | undefined, fallbackMs: number): number {
  if (!iso) return fallbackMs;
  const m = /^P(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)$/.exec(iso);
  if (!m) return fallbackMs;
  const [, h = '0', min = '0', s = '0'] = m;
  return Math.round((Number(h) * 3600 + Number(min) * 60 + Number(s)) * 1000);
}

/** Delay before retry `attempt` (1-based), per Knative's delivery spec. */
export function backoffMs(delivery: TriggerSpec['delivery'], attempt: number): number {
  return delivery.backoffPolicy === 'exponential' ? delivery.backoffDelayMs * 2 ** (attempt - 1) : delivery.backoffDelayMs * attempt;
}

/** Knative's dispatcher retries these; every other 4xx is final (dead letter). */
export const isRetryable = (status: number): boolean =>
  status >= 500 || status === 404 || status === 408 || status === 409 || status === 429;
