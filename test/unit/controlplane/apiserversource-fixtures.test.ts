// The recorded ApiServerSource requests (npm run fixtures:record) are real
// binary-mode CloudEvents: each parses with the CloudEvents SDK and is what
// its file name says.
import { HTTP } from 'cloudevents';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..', '..', 'fixtures', 'apiserversource');
const kinds = { swarm: 'Swarm', statefulset: 'StatefulSet', pod: 'Pod' } as const;
const modes = { resource: 'resource', reference: 'ref' } as const;

interface Fixture {
  method: string;
  headers: Record<string, string>;
  body: string;
}

const expected = Object.keys(modes).flatMap((mode) =>
  Object.keys(kinds).flatMap((kind) => ['add', 'update', 'delete'].map((verb) => `${mode}-${kind}-${verb}.json`)),
);

describe('recorded ApiServerSource fixtures', () => {
  it('cover both modes, the three kinds and the three verbs', () => {
    expect(readdirSync(dir).sort()).toEqual([...expected].sort());
  });

  for (const file of expected) {
    it(`${file} is a binary-mode CloudEvent of the named mode, kind and verb`, () => {
      const [mode, kind, verb] = file.replace('.json', '').split('-') as [keyof typeof modes, keyof typeof kinds, string];
      const fixture = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Fixture;
      expect(fixture.method).toBe('POST');
      const event = HTTP.toEvent({ headers: fixture.headers, body: fixture.body });
      if (Array.isArray(event)) throw new Error('expected a single event');
      expect(event.specversion).toBe('1.0');
      expect(event.type).toBe(`dev.knative.apiserver.${modes[mode]}.${verb}`);
      expect(event.subject).toMatch(new RegExp(`/${kind}s/[^/]+$`));
      const data = event.data as { kind?: string; name?: string; metadata?: { name?: string } };
      expect(data.kind).toBe(kinds[kind]);
      if (mode === 'reference') expect(data.name).toBe(event.subject?.split('/').pop());
      else expect(data.metadata?.name).toBe(event.subject?.split('/').pop());
    });
  }
});
