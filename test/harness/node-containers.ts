// A pod's containers as processes on this machine's real node, read from their
// cgroups (cgroup v1, the cgroupfs driver: kubepods/<qos>/pod<uid>/<container id>).
// For what the API does not show: a container's memory, its main process, and
// a crash (SIGKILL, as the kernel's OOM killer sends it).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually } from '../support/timeline.js';

/** The container's memory cgroup directory, while it exists. */
export function containerCgroup(podUid: string, containerId: string): string | undefined {
  return ['burstable', 'besteffort', ''].map((qos) => join('/sys/fs/cgroup/memory/kubepods', qos, `pod${podUid}`, containerId)).find((dir) => existsSync(dir));
}

export const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** The container's processes, its main one (pid 1 inside it) first. */
export function containerPids(podUid: string, containerId: string): number[] {
  const dir = containerCgroup(podUid, containerId);
  const procs = dir ? readText(join(dir, 'cgroup.procs')) : undefined;
  return (procs ?? '').split('\n').filter(Boolean).map(Number);
}

/** The running container's id (containerd://<id> in its status), by container name or the first. */
function runningContainerId(pod: V1Pod, container?: string): string | undefined {
  const status = pod.status?.containerStatuses?.find((c) => container === undefined || c.name === container);
  return status?.state?.running ? status.containerID?.replace(/^[a-z]+:\/\//, '') : undefined;
}

/** Kills the pod's running container as a crash would (SIGKILL to its processes); false when none runs. */
export function crashContainer(pod: V1Pod, container?: string): boolean {
  const id = runningContainerId(pod, container);
  const pids = id && pod.metadata?.uid ? containerPids(pod.metadata.uid, id) : [];
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  return pids.length > 0;
}

const backingOff = (pod: V1Pod): boolean => pod.status?.containerStatuses?.some((c) => c.state?.waiting?.reason === 'CrashLoopBackOff') ?? false;
const restarts = (pod: V1Pod): number => pod.status?.containerStatuses?.[0]?.restartCount ?? 0;

export interface CrashLoop {
  /** When the first crash was sent (epoch ms). */
  firstCrash: number;
  crashes: number;
  /** When `until` first held while the kubelet backed off (epoch ms). */
  heldAt?: number;
}

/**
 * Crashes a pod's container each time it runs, as a worker that keeps dying
 * would: the kubelet restarts the first crash at once, then backs off (10 s,
 * doubling), reported as CrashLoopBackOff. Without `until`: `crashes` crashes,
 * returning once the last one is restarted or backed off. With `until`: until
 * it holds while the kubelet backs off (crashing again each time the container
 * runs first, at most `crashes` times).
 */
export async function crashLoop(readPod: () => Promise<V1Pod>, options: { crashes: number; until?: () => Promise<boolean> }): Promise<CrashLoop> {
  const loop: CrashLoop = { firstCrash: 0, crashes: 0 };
  while (loop.crashes < options.crashes) {
    // Crashed as soon as it runs (a container backing off runs again within 5 min).
    const pod = await eventually('a running container to crash', async () => {
      const now = await readPod();
      return crashContainer(now) ? now : undefined;
    }, 330_000, 100);
    loop.crashes++;
    loop.firstCrash ||= Date.now();
    const before = restarts(pod);
    await eventually(`${pod.metadata?.name} restarted or backing off`, async () => {
      const now = await readPod();
      return restarts(now) > before || backingOff(now) || undefined;
    }, 60_000, 100);
    if (!options.until) continue;
    // Backing off: wait for `until`, or for the container to run again (then crash it again).
    const held = await eventually(`${pod.metadata?.name}: the awaited state while backing off, or running again`, async () => {
      if (!backingOff(await readPod())) return 'running';
      return (await options.until!()) ? 'held' : undefined;
    }, 330_000, 200);
    if (held === 'held') return { ...loop, heldAt: Date.now() };
  }
  return loop;
}
