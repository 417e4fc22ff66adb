// The TypeScript SDK's worker over a fake Lease API and a temp config file:
// stops before starts, acknowledgements only of what runs, a stop past its
// deadline, a failed start retried, the restart policy's single read.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorker, type Worker, type WorkerOptions } from '../../sdk/typescript/src/index.js';
import type { Lease, LeaseApi } from '../../sdk/typescript/src/lease.js';
import { jobsDigest } from '../../lib/workerconfig/index.js';
import { eventually } from '../support/timeline.js';

class FakeLeases implements LeaseApi {
  lease: Lease | undefined;
  writes = 0;
  async read() {
    return this.lease && structuredClone(this.lease);
  }
  async create(_ns: string, lease: Lease) {
    this.writes += 1;
    this.lease = lease;
    return lease;
  }
  replace = this.create;
  says(): string {
    const a = this.lease?.metadata?.annotations ?? {};
    return `${a['k8slab.info/config-version']} ${a['k8slab.info/jobs-digest']}`;
  }
}

let dir: string | undefined;
let worker: Worker | undefined;
afterEach(async () => {
  worker?.terminate('SIGINT');
  worker = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function setup(extra: Partial<WorkerOptions> = {}) {
  dir = mkdtempSync(join(tmpdir(), 'swarm-sdk-'));
  const path = join(dir, 'config.yml');
  const write = (version: number, jobs: string[]) => {
    writeFileSync(`${path}.tmp`, `version: ${version}\nworkloads:\n  w-0:\n    jobs: [${jobs.join(', ')}]\n    version: ${version}\n`);
    renameSync(`${path}.tmp`, path);
  };
  const leases = new FakeLeases();
  const calls: string[] = [];
  const options: WorkerOptions = {
    start: (job) => void calls.push(`start ${job}`),
    stop: (job) => void calls.push(`stop ${job}`),
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
  return { write, leases, calls, options };
}

describe('the TypeScript SDK worker', () => {
  it('stops before it starts, and acknowledges each applied version once its jobs run', async () => {
    const { write, leases, calls, options } = setup();
    write(1, ['a', 'b']);
    worker = createWorker(options);
    const done = worker.run();
    await eventually('v1', async () => leases.says() === `1 ${jobsDigest(['a', 'b'])}`, 10_000, 20);
    write(2, ['b', 'c']);
    await eventually('v2', async () => leases.says() === `2 ${jobsDigest(['b', 'c'])}`, 10_000, 20);
    expect(calls).toEqual(['start a', 'start b', 'stop a', 'start c']);
    expect(leases.lease?.metadata?.annotations?.['k8slab.info/worker-protocol']).toBe('1');
    expect(leases.writes).toBe(2);
    worker.terminate('SIGTERM');
    await done;
    expect(calls.slice(4).sort()).toEqual(['stop b', 'stop c']);
  });

  it('counts a job whose stop overran as running: unhealthy, nothing newer acknowledged until the stop returns', async () => {
    let release!: () => void;
    const { write, leases, options } = setup({
      stop: (job) => (job === 'a' ? new Promise<void>((resolve) => (release = resolve)) : undefined),
      stopDeadlineMs: 50,
    });
    write(1, ['a', 'b']);
    worker = createWorker(options);
    void worker.run();
    await eventually('v1', async () => leases.says().startsWith('1 '), 10_000, 20);
    write(2, ['b']);
    await eventually('unhealthy', async () => !(await worker!.healthy()), 10_000, 20);
    expect(leases.says()).toBe(`1 ${jobsDigest(['a', 'b'])}`);
    release();
    await eventually('v2', async () => leases.says() === `2 ${jobsDigest(['b'])}`, 10_000, 20);
    expect(await worker.healthy()).toBe(true);
  });

  it('leaves a failed start out of the acknowledgement and tries it again', async () => {
    let failures = 1;
    const { write, leases, calls, options } = setup({
      start: (job) => {
        calls.push(`start ${job}`);
        if (job === 'b' && failures-- > 0) throw new Error('not yet');
      },
      retryBaseMs: 10,
    });
    write(1, ['a', 'b']);
    worker = createWorker(options);
    void worker.run();
    await eventually('v1 with a and b', async () => leases.says() === `1 ${jobsDigest(['a', 'b'])}`, 10_000, 20);
    expect(calls.filter((c) => c === 'start b')).toHaveLength(2);
  });

  it('under restart policy Restart reads the config once', async () => {
    const { write, leases, calls, options } = setup({ restartPolicy: 'Restart' });
    write(1, ['a']);
    worker = createWorker(options);
    void worker.run();
    await eventually('v1', async () => leases.says().startsWith('1 '), 10_000, 20);
    write(2, ['b']);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(calls).toEqual(['start a']);
  });
});
