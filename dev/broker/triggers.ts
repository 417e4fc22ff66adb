// The Triggers, read from the kustomize tree (knative/base), never copied into code.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { durationMs, type Filter, type TriggerSpec } from './filters.js';

export const TRIGGERS_FILE = fileURLToPath(new URL('../../knative/base/triggers.yaml', import.meta.url));

interface TriggerManifest {
  kind?: string;
  metadata?: { name?: string };
  spec?: {
    filters?: Filter[];
    filter?: { attributes?: Record<string, string> };
    subscriber?: { ref?: { name?: string } };
    delivery?: { retry?: number; backoffPolicy?: string; backoffDelay?: string; deadLetterSink?: { ref?: { name?: string } } };
  };
}

export function triggersFromYaml(text: string): TriggerSpec[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as TriggerManifest | null)
    .filter((m): m is TriggerManifest => m?.kind === 'Trigger')
    .map((m) => {
      const d = m.spec?.delivery ?? {};
      const subscriber = m.spec?.subscriber?.ref?.name;
      if (!m.metadata?.name || !subscriber) throw new Error(`Trigger without a name or subscriber ref in ${TRIGGERS_FILE}`);
      return {
        name: m.metadata.name,
        ...(m.spec?.filters ? { filters: m.spec.filters } : {}),
        ...(m.spec?.filter ? { filter: m.spec.filter } : {}),
        subscriber,
        delivery: {
          retry: d.retry ?? 0,
          backoffPolicy: d.backoffPolicy === 'linear' ? 'linear' : 'exponential',
          backoffDelayMs: durationMs(d.backoffDelay, 200),
          ...(d.deadLetterSink?.ref?.name ? { deadLetterSink: d.deadLetterSink.ref.name } : {}),
        },
      } satisfies TriggerSpec;
    });
}

export const loadTriggers = (file = TRIGGERS_FILE): TriggerSpec[] => triggersFromYaml(readFileSync(file, 'utf8'));
