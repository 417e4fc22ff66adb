// The per-instance memory of the assign reconciler (the config cache, lib/reconcilers/shortcuts.ts):
// an optimisation only, so every answer must be the one computed afresh, and
// an entry must never answer for other inputs.
import { describe, expect, it } from 'vitest';
import { cachedConfigReader, rememberWritten } from '../../lib/reconcilers/shortcuts.js';
import type { ConfigMapView } from '../../lib/kube/types.js';
import { assignmentOf, nextConfig, parse, render } from '../../lib/workerconfig/index.js';

const text = render(nextConfig(undefined, { 'w-0': ['a', 'b'], 'w-1': ['c'] }));
const configMap = (resourceVersion: string): ConfigMapView => ({
  name: 'cm',
  namespace: 'ns',
  uid: 'cm-uid',
  resourceVersion,
  labels: {},
  annotations: {},
  ownerReferences: [],
  data: { 'config.yml': text },
});

describe('the assign reconciler\'s memory', () => {
  it('reads a ConfigMap version once: the same parse and the same assignment object on the next event', () => {
    const first = cachedConfigReader(configMap('7'))(text);
    const again = cachedConfigReader(configMap('7'))(text);
    expect(again.previous).toBe(first.previous);
    expect(again.assignment?.()).toBe(first.assignment?.());
    expect(cachedConfigReader(configMap('8'))(text).previous).not.toBe(first.previous);
  });

  it('remembers the config it has just written for the version the write returned, only if the API server holds that very text', () => {
    const config = nextConfig(undefined, { 'w-1': ['c'], 'w-0': ['b', 'a'] });
    const written = render(config);
    rememberWritten({ ...configMap('20'), data: { 'config.yml': written } }, 'config.yml', written, config);
    const read = cachedConfigReader(configMap('20'))(written);
    expect(read.previous).toStrictEqual(parse(written));
    expect(read.rendered?.()).toBe(written);
    expect(read.assignment?.()).toEqual(assignmentOf(parse(written)));
    // Another text under that version (it cannot be, but): read afresh.
    expect(cachedConfigReader(configMap('20'))(text).previous).toStrictEqual(parse(text));
    // The server holding other text than was rendered: nothing remembered for it.
    rememberWritten({ ...configMap('21'), data: { 'config.yml': text } }, 'config.yml', written, config);
    expect(cachedConfigReader(configMap('21'))(text).previous).toStrictEqual(parse(text));
  });
});
