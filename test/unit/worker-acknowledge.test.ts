// The worker library's acknowledgement over a fake Lease API: create, guarded
// replace, conflicts and transient failures retried, refusals surfaced.
import { describe, expect, it } from 'vitest';
import { alreadySays, createAcknowledger, type Lease, type LeaseApi } from '../../sdk/typescript/src/lease.js';
import { parseAcknowledgement, jobsDigest } from '../../lib/workerconfig/index.js';

class FakeLeases implements LeaseApi {
  lease: Lease | undefined;
  rv = 0;
  calls: string[] = [];
  failures: number[] = [];
  private maybeFail(): void {
    const code = this.failures.shift();
    if (code !== undefined) throw Object.assign(new Error(`HTTP ${code}`), { code });
  }
  async read() {
    this.calls.push('read');
    this.maybeFail();
    return this.lease ? structuredClone(this.lease) : undefined;
  }
  async create(_ns: string, lease: Lease) {
    this.calls.push('create');
    this.maybeFail();
    if (this.lease) throw Object.assign(new Error('exists'), { code: 409 });
    this.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    return this.lease;
  }
  async replace(_ns: string, lease: Lease) {
    this.calls.push('replace');
    this.maybeFail();
    if (lease.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) throw Object.assign(new Error('conflict'), { code: 409 });
    this.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    return this.lease;
  }
}

const setup = (api: FakeLeases) =>
  createAcknowledger({ pod: 'swarm-worker-1', podUid: 'uid-1', namespace: 'ns', api, backoffMs: 1, now: () => new Date('2026-11-22T00:00:00Z') });

describe('acknowledge (sdk/typescript/src/lease.ts)', () => {
  it('creates the Lease named after the pod, labelled with its StatefulSet, held by the pod uid', async () => {
    const api = new FakeLeases();
    await setup(api)({ version: 3, jobs: ['b', 'a'] });
    expect(api.lease?.metadata).toMatchObject({ name: 'swarm-worker-1', namespace: 'ns', labels: { 'k8slab.info/swarm': 'swarm-worker' } });
    const ack = parseAcknowledgement({ name: 'swarm-worker-1', holderIdentity: api.lease?.spec?.holderIdentity ?? '', annotations: api.lease?.metadata?.annotations ?? {} });
    expect(ack).toEqual({ worker: 'swarm-worker-1', podUid: 'uid-1', version: 3, digest: jobsDigest(['a', 'b']), loadedAt: '2026-11-22T00:00:00.000Z', protocol: '1', fenced: false });
  });

  it('replaces it guarded by resourceVersion, writes nothing when it already says the same, and takes a new pod uid', async () => {
    const api = new FakeLeases();
    await setup(api)({ version: 3, jobs: ['a'] });
    const acknowledge = setup(api);
    await acknowledge({ version: 3, jobs: ['a'] });
    expect(api.calls).toEqual(['read', 'create', 'read']);
    await acknowledge({ version: 4, jobs: ['a', 'c'] });
    expect(api.calls.slice(3)).toEqual(['read', 'replace']);
    expect(alreadySays(api.lease, 'uid-1', { version: 4, jobs: ['c', 'a'] })).toBe(true);
    expect(alreadySays(api.lease, 'uid-2', { version: 4, jobs: ['a', 'c'] })).toBe(false);
  });

  it('says k8slab.info/fenced while fenced, and drops it with the acknowledgement it writes when it resumes (W27)', async () => {
    const api = new FakeLeases();
    const acknowledge = setup(api);
    await acknowledge({ version: 3, jobs: [], protocol: '2', fenced: true });
    expect(api.lease?.metadata?.annotations?.['k8slab.info/fenced']).toBe('true');
    expect(alreadySays(api.lease, 'uid-1', { version: 3, jobs: [], protocol: '2' })).toBe(false);
    await acknowledge({ version: 4, jobs: [], protocol: '2' });
    expect(api.lease?.metadata?.annotations).not.toHaveProperty('k8slab.info/fenced');
  });

  it('writes again what an earlier run of the pod wrote (Swarm voids an acknowledgement loaded before the container started)', async () => {
    const api = new FakeLeases();
    await setup(api)({ version: 3, jobs: ['a'] });
    // The container restarted a minute later: the same share, but this process has not said it yet.
    const restarted = createAcknowledger({ pod: 'swarm-worker-1', podUid: 'uid-1', namespace: 'ns', api, backoffMs: 1, now: () => new Date('2026-11-22T00:01:00Z') });
    await restarted({ version: 3, jobs: ['a'] });
    expect(api.calls).toEqual(['read', 'create', 'read', 'replace']);
    expect(api.lease?.metadata?.annotations?.['k8slab.info/loaded-at']).toBe('2026-11-22T00:01:00.000Z');
  });

  it('retries conflicts and transient failures, gives up at once on a refusal', async () => {
    const api = new FakeLeases();
    api.failures = [503, 409, 429];
    await setup(api)({ version: 1, jobs: [] });
    expect(api.lease?.metadata?.annotations?.['k8slab.info/config-version']).toBe('1');
    api.failures = [403];
    await expect(setup(api)({ version: 2, jobs: [] })).rejects.toThrow(/403/);
  });

  it('writes only the latest of acknowledgements made while one is in flight', async () => {
    const api = new FakeLeases();
    const acknowledge = setup(api);
    await Promise.all([acknowledge({ version: 1, jobs: ['a'] }), acknowledge({ version: 2, jobs: ['b'] }), acknowledge({ version: 3, jobs: ['c'] })]);
    expect(api.lease?.metadata?.annotations?.['k8slab.info/config-version']).toBe('3');
    expect(api.calls.filter((c) => c !== 'read').length).toBeLessThanOrEqual(2);
  });
});
