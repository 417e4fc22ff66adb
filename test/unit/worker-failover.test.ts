// The TypeScript SDK's worker with failover on (failover.yml beside
// config.yml, a 3 s lease: renewal every second, renew deadline 2 s), over a
// fake Lease API: a partition (every API call fails), a frozen process (its
// clock jumps past the deadline) and a hung job (its health check fails),
// under both handoffs. What the worker does is observed, not timed: each
// `eventually` waits for a state.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorker, type Worker, type WorkerOptions } from '../../sdk/typescript/src/index.js';
import type { Lease, LeaseApi } from '../../sdk/typescript/src/lease.js';
import { eventually } from '../support/timeline.js';

class FakeLeases implements LeaseApi {
  readonly byName = new Map<string, Lease>();
  down = false;
  private check() {
    if (this.down) throw Object.assign(new Error('no answer'), { code: undefined });
  }
  async read(_ns: string, name: string) {
    this.check();
    return structuredClone(this.byName.get(name));
  }
  async create(_ns: string, lease: Lease) {
    this.check();
    this.byName.set(lease.metadata!.name!, lease);
    return lease;
  }
  replace = this.create;
  protocol = () => this.byName.get('w-0')?.metadata?.annotations?.['k8slab.info/worker-protocol'];
  /** The acknowledgement says fenced (W27). */
  fenced = () => this.byName.get('w-0')?.metadata?.annotations?.['k8slab.info/fenced'] === 'true';
}

let dir: string | undefined;
let worker: Worker | undefined;
afterEach(async () => {
  worker?.terminate('SIGINT');
  worker = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function setup(handoff: 'BreakBeforeMake' | 'MakeBeforeBreak', extra: Partial<WorkerOptions> = {}) {
  dir = mkdtempSync(join(tmpdir(), 'swarm-failover-'));
  const path = join(dir, 'config.yml');
  const write = (version: number, jobs: string[]) => {
    writeFileSync(`${path}.tmp`, `version: ${version}\nworkloads:\n  w-0:\n    jobs: [${jobs.join(', ')}]\n    version: ${version}\n`);
    renameSync(`${path}.tmp`, path);
  };
  writeFileSync(join(dir, 'failover.yml'), `leaseSeconds: 3\nhandoff: ${handoff}\n`);
  const leases = new FakeLeases();
  const running = new Set<string>();
  const options: WorkerOptions = {
    start: (job) => void running.add(job),
    stop: (job) => void running.delete(job),
    pod: 'w-0',
    podUid: 'uid-0',
    namespace: 'ns',
    configPath: path,
    leases,
    handleSignals: false,
    env: {},
    log: { debug: () => undefined, info: () => undefined, warn: () => undefined },
    ...extra,
  };
  return { write, leases, running, options };
}

const runs = (running: Set<string>, jobs: string[]) => async () => [...running].sort().join(',') === jobs.join(',');
const ready = async () => (await worker!.ready()).ready;

/** A MakeBeforeBreak worker running job a, Ready, then cut off (its renewals fail) until it turns not ready. */
async function staleUnderMakeBeforeBreak() {
  const set = setup('MakeBeforeBreak');
  set.write(1, ['a']);
  worker = createWorker(set.options);
  void worker.run();
  await eventually('ready', ready, 10_000, 20);
  set.leases.down = true;
  await eventually('stale: not ready', async () => (await worker!.ready()).ready === false, 10_000, 20);
  return set;
}

describe('failover in the TypeScript SDK worker', () => {
  it('BreakBeforeMake, partitioned: stops every job by its own clock, then turns not ready; back, it says fenced and resumes only on an empty share', async () => {
    const { write, leases, running, options } = setup('BreakBeforeMake');
    write(1, ['a', 'b']);
    worker = createWorker(options);
    void worker.run();
    await eventually('runs v1', runs(running, ['a', 'b']), 10_000, 20);
    await eventually('ready', ready, 10_000, 20);
    expect(leases.byName.get('w-0.heartbeat')?.spec?.leaseDurationSeconds).toBe(3);
    await eventually('acknowledged as protocol 2', async () => leases.protocol() === '2', 10_000, 20);
    leases.down = true;
    await eventually('fenced: nothing runs', runs(running, []), 10_000, 20);
    await eventually('not ready', async () => !(await ready()), 10_000, 20);
    const renewed = leases.byName.get('w-0.heartbeat')?.spec?.renewTime;
    leases.down = false;
    await eventually('heartbeat renewed again', async () => leases.byName.get('w-0.heartbeat')?.spec?.renewTime !== renewed, 10_000, 20);
    await eventually('says fenced', async () => leases.fenced(), 10_000, 20);
    // The same config, or a newer one naming jobs (Swarm may have written it before it saw the fence), runs nothing.
    write(2, ['b']);
    await new Promise((r) => setTimeout(r, 1500));
    expect([...running]).toEqual([]);
    expect(await worker.ready()).toEqual({ ready: false, reason: 'fenced: waiting for a fresh heartbeat and an empty share' });
    write(3, []);
    await eventually('resumed on the empty share: the annotation dropped', async () => !leases.fenced(), 10_000, 20);
    await eventually('ready again', ready, 10_000, 20);
    write(4, ['b']);
    await eventually('runs v4', runs(running, ['b']), 10_000, 20);
  });

  it('BreakBeforeMake, a new process of a pod whose previous one fenced, or went stale: starts fenced until an empty share', async () => {
    for (const left of ['fenced', 'stale'] as const) {
      const { write, leases, running, options } = setup('BreakBeforeMake');
      if (left === 'fenced') leases.byName.set('w-0', { metadata: { name: 'w-0', annotations: { 'k8slab.info/fenced': 'true' } }, spec: { holderIdentity: 'uid-0' } });
      else leases.byName.set('w-0.heartbeat', { metadata: { name: 'w-0.heartbeat' }, spec: { holderIdentity: 'uid-0', renewTime: new Date(Date.now() - 60_000).toISOString() } });
      write(1, ['a']);
      worker = createWorker(options);
      void worker.run();
      await eventually(`${left}: says fenced`, async () => leases.fenced(), 10_000, 20);
      await new Promise((r) => setTimeout(r, 1500));
      expect([...running]).toEqual([]);
      write(2, []);
      await eventually(`${left}: resumed`, async () => !leases.fenced(), 10_000, 20);
      write(3, ['a']);
      await eventually(`${left}: runs v3`, runs(running, ['a']), 10_000, 20);
      worker.terminate('SIGINT');
    }
    // Another pod's Leases (another uid), or a fresh renewal: it starts as today.
    const { write, leases, running, options } = setup('BreakBeforeMake');
    leases.byName.set('w-0', { metadata: { name: 'w-0', annotations: { 'k8slab.info/fenced': 'true' } }, spec: { holderIdentity: 'uid-earlier' } });
    leases.byName.set('w-0.heartbeat', { metadata: { name: 'w-0.heartbeat' }, spec: { holderIdentity: 'uid-0', renewTime: new Date().toISOString() } });
    write(1, ['a']);
    worker = createWorker(options);
    void worker.run();
    await eventually('runs v1', runs(running, ['a']), 10_000, 20);
    expect(leases.fenced()).toBe(false);
  }, 30_000);

  it('BreakBeforeMake, partitioned with nothing to run: fenced, then fresh again it re-reads its empty share and resumes, no config written (W27)', async () => {
    // Its share is empty, so Swarm writes nothing new when it expires it: the file as it is now lifts the fence.
    const { write, leases, options } = setup('BreakBeforeMake');
    write(1, []);
    worker = createWorker(options);
    void worker.run();
    await eventually('ready', ready, 10_000, 20);
    leases.down = true;
    await eventually('fenced: not ready', async () => !(await ready()), 10_000, 20);
    leases.down = false;
    await eventually('ready again with no newer config', ready, 10_000, 20);
  });

  it('BreakBeforeMake: starts nothing before its first renewal', async () => {
    const { write, leases, running, options } = setup('BreakBeforeMake');
    leases.down = true;
    write(1, ['a']);
    worker = createWorker(options);
    void worker.run();
    await new Promise((r) => setTimeout(r, 500));
    expect([...running]).toEqual([]);
    leases.down = false;
    await eventually('runs v1 once renewed', runs(running, ['a']), 10_000, 20);
  });

  it('MakeBeforeBreak, partitioned: keeps its jobs, turns not ready, and ready again once it renews', async () => {
    const { leases, running } = await staleUnderMakeBeforeBreak();
    expect(await worker!.ready()).toEqual({ ready: false, reason: 'heartbeat stale' });
    expect([...running]).toEqual(['a']);
    leases.down = false;
    await eventually('ready again', ready, 10_000, 20);
    expect([...running]).toEqual(['a']);
  });

  it('stale under MakeBeforeBreak when the handoff turns BreakBeforeMake: fences at once (stops every job, then not ready), not Ready and unfenced', async () => {
    // Seen on the real node: the Swarm switched to BreakBeforeMake while the worker was cut off; it had gone
    // stale under MakeBeforeBreak, then read the new handoff and answered ready with its jobs, so none moved.
    const { write, leases, running } = await staleUnderMakeBeforeBreak();
    expect([...running]).toEqual(['a']);
    writeFileSync(join(dir!, 'failover.yml'), 'leaseSeconds: 3\nhandoff: BreakBeforeMake\n');
    await eventually('fenced: nothing runs', runs(running, []), 10_000, 20);
    expect(await worker!.ready()).toEqual({ ready: false, reason: 'fenced: waiting for a fresh heartbeat and an empty share' });
    leases.down = false;
    write(2, []);
    await eventually('ready on the empty share', ready, 10_000, 20);
    write(3, ['a']);
    await eventually('runs v3', runs(running, ['a']), 10_000, 20);
    await eventually('ready again', ready, 10_000, 20);
  }, 20_000);

  it('frozen (its clock jumps past the renew deadline): fences first thing, and its jobs learn they may not act', async () => {
    let offset = 0;
    let mayAct: (() => boolean) | undefined;
    const { write, running, options } = setup('BreakBeforeMake', { now: () => performance.now() + offset });
    const opts = { ...options, start: (job: string, c: { mayAct: () => boolean }) => void (running.add(job), (mayAct = c.mayAct)) };
    write(1, ['a']);
    worker = createWorker(opts);
    void worker.run();
    await eventually('runs v1', runs(running, ['a']), 10_000, 20);
    expect(mayAct!()).toBe(true);
    offset += 60_000; // what SIGSTOP and SIGCONT a minute later look like to the worker's clock
    expect(mayAct!()).toBe(false);
    await eventually('fenced', runs(running, []), 10_000, 20);
  });

  it('a hung job (its health check fails): stops renewing, unhealthy, and fences like a partition', async () => {
    let hung = false;
    const { write, running, options } = setup('BreakBeforeMake', { health: () => !hung });
    write(1, ['a', 'b']);
    worker = createWorker(options);
    void worker.run();
    await eventually('ready', ready, 10_000, 20);
    hung = true;
    expect(await worker.healthy()).toBe(false);
    await eventually('fenced', runs(running, []), 10_000, 20);
    await eventually('not ready', async () => !(await ready()), 10_000, 20);
  });

  it('MakeBeforeBreak, a hung job: not ready at once, jobs kept', async () => {
    let hung = false;
    const { write, running, options } = setup('MakeBeforeBreak', { health: () => !hung });
    write(1, ['a']);
    worker = createWorker(options);
    void worker.run();
    await eventually('ready', ready, 10_000, 20);
    hung = true;
    expect(await worker.ready()).toEqual({ ready: false, reason: 'jobs unhealthy' });
    expect([...running]).toEqual(['a']);
  });
});
