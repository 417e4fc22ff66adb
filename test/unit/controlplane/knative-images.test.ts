import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ImagePins } from '../../controlplane/knative-images.js';
import {
  KO_REPO,
  baseImageEntries,
  gzipImage,
  imageCacheKey,
  knativeImageName,
  knativeModules,
  otelcolBuilderConfig,
  requiredVersion,
  rewriteKoReferences,
} from '../../controlplane/knative-images.js';

const pins: ImagePins = {
  knativeServing: 'v0.47.0',
  knativeEventing: 'v0.47.0',
  ko: 'v0.19.1',
  traefik: 'v3.6.12',
  otelcol: 'v0.160.0',
  goBuildFlags: ['-trimpath'],
  goLdflags: '-s -w',
};

const digest = (c: string): string => `sha256:${c.repeat(64)}`;
const eventing = knativeModules(pins).find((m) => m.id === 'knative-eventing')!;
const nameFor = (importPath: string): string => knativeImageName(eventing, importPath);

describe('knative images', () => {
  it('names an image after its command under cmd/', () => {
    expect(nameFor('knative.dev/eventing/cmd/broker/filter')).toBe('swarm.local/knative/eventing/broker/filter:v0.47.0');
    expect(nameFor('knative.dev/eventing/cmd/controller')).toBe('swarm.local/knative/eventing/controller:v0.47.0');
    expect(() => nameFor('knative.dev/serving/cmd/activator')).toThrow(/not a command of knative.dev\/eventing/);
  });

  it('rewrites what ko resolve printed to the image names, once per import path', () => {
    const printed = [
      'metadata:',
      '  labels:',
      '    app.kubernetes.io/version: devel',
      'spec:',
      `  image: ${KO_REPO}/knative.dev/eventing/cmd/controller@${digest('a')}`,
      '  env:',
      '  - name: APISERVER_RA_IMAGE',
      `    value: ${KO_REPO}/knative.dev/eventing/cmd/apiserver_receive_adapter@${digest('b')}`,
      `  other: ${KO_REPO}/knative.dev/eventing/cmd/controller@${digest('a')}`,
    ].join('\n');
    const { yaml, images } = rewriteKoReferences(printed, KO_REPO, nameFor, 'v0.47.0');
    expect(yaml).toContain('image: swarm.local/knative/eventing/controller:v0.47.0');
    expect(yaml).toContain('value: swarm.local/knative/eventing/apiserver_receive_adapter:v0.47.0');
    expect(yaml).toContain('app.kubernetes.io/version: "0.47.0"');
    expect(yaml).not.toContain(KO_REPO);
    expect(images).toEqual([
      { importPath: 'knative.dev/eventing/cmd/controller', digest: digest('a'), name: 'swarm.local/knative/eventing/controller:v0.47.0' },
      {
        importPath: 'knative.dev/eventing/cmd/apiserver_receive_adapter',
        digest: digest('b'),
        name: 'swarm.local/knative/eventing/apiserver_receive_adapter:v0.47.0',
      },
    ]);
  });

  it('fails on references it cannot resolve', () => {
    expect(() => rewriteKoReferences('image: ko://knative.dev/eventing/cmd/webhook\n', KO_REPO, nameFor, 'v0.47.0')).toThrow(
      /unresolved image reference.*ko:\/\/knative.dev\/eventing\/cmd\/webhook/,
    );
    expect(() => rewriteKoReferences(`image: ${KO_REPO}/knative.dev/eventing/cmd/webhook:latest\n`, KO_REPO, nameFor, 'v0.47.0')).toThrow(
      /unresolved image reference/,
    );
    const twice = `a: ${KO_REPO}/knative.dev/eventing/cmd/webhook@${digest('a')}\nb: ${KO_REPO}/knative.dev/eventing/cmd/webhook@${digest('c')}\n`;
    expect(() => rewriteKoReferences(twice, KO_REPO, nameFor, 'v0.47.0')).toThrow(/two digests/);
  });

  it('keys a cache directory by everything the build depends on, in any key order', () => {
    const key = imageCacheKey('knative-serving-images', 'v0.47.0', { go: 'go1.26.8', ko: 'v0.19.1', flags: ['-trimpath'] });
    expect(key).toMatch(/^knative-serving-images-v0\.47\.0-[0-9a-f]{12}$/);
    expect(imageCacheKey('knative-serving-images', 'v0.47.0', { flags: ['-trimpath'], ko: 'v0.19.1', go: 'go1.26.8' })).toBe(key);
    expect(imageCacheKey('knative-serving-images', 'v0.47.0', { go: 'go1.26.9', ko: 'v0.19.1', flags: ['-trimpath'] })).not.toBe(key);
    expect(imageCacheKey('knative-serving-images', 'v0.47.0', { go: 'go1.26.8', ko: 'v0.19.2', flags: ['-trimpath'] })).not.toBe(key);
  });

  it('makes the release YAMLs the release scripts make, from the pinned versions', () => {
    const [serving, ev] = knativeModules(pins);
    expect(serving!.manifests.map((m) => m.file)).toEqual(['serving-crds.yaml', 'serving-core.yaml']);
    expect(ev!.manifests.map((m) => m.file)).toEqual(['eventing-crds.yaml', 'eventing-core.yaml', 'in-memory-channel.yaml', 'mt-channel-broker.yaml']);
    expect(serving!.links.map((l) => l.path)).toContain('config/core/configmaps/network.yaml');
    expect(ev!.links.map((l) => l.path)).toContain('config/core/configmaps/eventing-transformations-images.yaml');
    expect(otelcolBuilderConfig(pins, '/out')).toContain('go.opentelemetry.io/collector/receiver/otlpreceiver v0.160.0');
    expect(otelcolBuilderConfig(pins, '/out')).toContain('output_path: /out');
  });

  it('reads the version a go.mod requires, in a block or on its own line', () => {
    const goMod = 'module knative.dev/serving\n\nrequire knative.dev/pkg v0.0.1\n\nrequire (\n\tknative.dev/caching v0.0.0-2025-abc\n\tknative.dev/networking v0.0.0-2025-def // indirect\n)\n';
    expect(requiredVersion(goMod, 'knative.dev/networking')).toBe('v0.0.0-2025-def');
    expect(requiredVersion(goMod, 'knative.dev/pkg')).toBe('v0.0.1');
    expect(() => requiredVersion(goMod, 'knative.dev/eventing')).toThrow(/requires no/);
  });

  it('builds the same base image from the same CA bundle, with the nonroot user', () => {
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\n');
    const one = gzipImage(baseImageEntries(ca), { user: '65532' });
    const two = gzipImage(baseImageEntries(ca), { user: '65532' });
    expect(one.manifest.digest).toBe(two.manifest.digest);
    const layer = gunzipSync(one.blobs[1]!.data).toString('latin1');
    expect(layer).toContain('nonroot:x:65532:65532');
    expect(layer).toContain('etc/ssl/certs/ca-certificates.crt');
    const config = JSON.parse(one.blobs[0]!.data.toString()) as { config: { User: string }; rootfs: { diff_ids: string[] } };
    expect(config.config.User).toBe('65532');
    expect(gzipImage(baseImageEntries(Buffer.from('other')), { user: '65532' }).manifest.digest).not.toBe(one.manifest.digest);
  });
});
