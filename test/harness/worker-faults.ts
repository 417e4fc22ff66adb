// Faults of one worker pod on the real node, for failure detection
// (docs/failure-detection.md): its container's processes frozen (SIGSTOP) and
// resumed, its traffic to the API server dropped by an iptables rule inside
// the pod's network namespace (nsenter) and let through again, and its jobs
// hung by the reference worker's test hook (HANG_JOBS_ON_SIGNAL=SIGUSR2,
// examples/worker/hang-hook.ts). Each fault remembers how to undo itself;
// `undoAll` undoes whatever is still in place (an afterAll calls it whatever happened).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { containerPids } from './node-containers.js';

const run = promisify(execFile);

/** The worker container's processes on the host (its main one first), or [] when it does not run. */
export function workerPids(pod: V1Pod, container = 'worker'): number[] {
  const status = pod.status?.containerStatuses?.find((c) => c.name === container);
  const id = status?.state?.running ? status.containerID?.replace(/^[a-z]+:\/\//, '') : undefined;
  return id && pod.metadata?.uid ? containerPids(pod.metadata.uid, id) : [];
}

/** Whether a process is stopped by a signal (state T in /proc/<pid>/stat). */
export function isStopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
  } catch {
    return false;
  }
}

const signal = (pids: readonly number[], sig: NodeJS.Signals): void => {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // Gone (the kubelet restarted the container): nothing to resume.
    }
  }
};

/** The iptables rules that drop a pod's packets to the API server: its Service address and each endpoint. */
function dropRules(apiServer: { serviceIp: string; endpoints: ReadonlyArray<{ ip: string; port: number }> }): string[][] {
  return [
    ['OUTPUT', '-d', apiServer.serviceIp, '-p', 'tcp', '-j', 'DROP'],
    ...apiServer.endpoints.map(({ ip, port }) => ['OUTPUT', '-d', ip, '-p', 'tcp', '--dport', String(port), '-j', 'DROP']),
  ];
}

export class WorkerFaults {
  private readonly undo = new Map<string, () => Promise<void>>();

  /** SIGSTOP to the pod's worker container; returns its pids. */
  freeze(pod: V1Pod): number[] {
    const pids = workerPids(pod);
    if (pids.length === 0) throw new Error(`${pod.metadata?.name}: no running worker container to freeze`);
    signal(pids, 'SIGSTOP');
    this.undo.set(`freeze ${pod.metadata?.name}`, async () => signal(pids, 'SIGCONT'));
    return pids;
  }

  async thaw(pod: V1Pod): Promise<void> {
    await this.undoOne(`freeze ${pod.metadata?.name}`);
  }

  /** Drops the pod's traffic to the API server, inside its network namespace (through its main process's). */
  async partition(pod: V1Pod, apiServer: { serviceIp: string; endpoints: ReadonlyArray<{ ip: string; port: number }> }): Promise<void> {
    const pid = workerPids(pod)[0];
    if (pid === undefined) throw new Error(`${pod.metadata?.name}: no running worker container to cut off`);
    // The namespace file is held open by nsenter for each call; the pod's netns lives as long as its sandbox.
    const netns = `/proc/${pid}/ns/net`;
    const rules = dropRules(apiServer);
    const iptables = (op: '-A' | '-D', rule: string[]) => run('nsenter', [`--net=${netns}`, 'iptables', '-w', op, ...rule]);
    const added: string[][] = [];
    const heal = async () => {
      for (const rule of added) await iptables('-D', rule).catch(() => undefined); // the netns gone with its pod: nothing left
    };
    this.undo.set(`partition ${pod.metadata?.name}`, heal);
    for (const rule of rules) {
      await iptables('-A', rule);
      added.push(rule);
    }
  }

  async heal(pod: V1Pod): Promise<void> {
    await this.undoOne(`partition ${pod.metadata?.name}`);
  }

  /** The reference worker's test hook: its running jobs hang (it must run with HANG_JOBS_ON_SIGNAL=SIGUSR2). */
  hang(pod: V1Pod): void {
    const pid = workerPids(pod)[0];
    if (pid === undefined) throw new Error(`${pod.metadata?.name}: no running worker container to hang`);
    process.kill(pid, 'SIGUSR2');
  }

  /** Undoes every fault still in place. */
  async undoAll(): Promise<void> {
    for (const key of [...this.undo.keys()]) await this.undoOne(key);
  }

  private async undoOne(key: string): Promise<void> {
    const undo = this.undo.get(key);
    this.undo.delete(key);
    await undo?.();
  }
}
