// Reads what the introspection page shows: the Swarm, its worker config, the
// pending restarts and the last change, all from the API (nothing cached).
import { readLastChange, readRestarts, type Move } from '../lib/decisions/workspace.js';
import type { KubeClient } from '../lib/kube/client.js';
import { swarmView, type SwarmView } from '../lib/introspection/view.js';
import { parse, type WorkerConfig } from '../lib/workerconfig/index.js';

export function readSwarmView(kube: KubeClient) {
  return async (namespace: string, name: string): Promise<SwarmView | undefined> => {
    const swarm = await kube.getSwarm(namespace, name);
    if (!swarm) return undefined;
    const configMap = swarm.spec?.configMapName ? await kube.getConfigMap(namespace, swarm.spec.configMapName) : undefined;
    let config: WorkerConfig | undefined;
    try {
      const text = configMap?.data[swarm.spec.configKey ?? 'config.yml'];
      config = text ? parse(text) : undefined;
    } catch {
      config = undefined;
    }
    const annotations = configMap?.annotations ?? {};
    const lastChange = readLastChange(annotations);
    return swarmView({
      swarm,
      ...(config ? { config } : {}),
      pendingRestarts: readRestarts(annotations).steps.map((s) => s.worker),
      ...(lastChange && config ? { lastChange: { version: lastChange.version, before: ownersBefore(config, lastChange.moves) } } : {}),
    });
  };
}

/** Worker → jobs just before the last change: the current shares with its moves undone. */
export function ownersBefore(config: WorkerConfig, moves: readonly Move[]): Record<string, string[]> {
  const before = new Map(Object.entries(config.workloads).map(([w, share]) => [w, new Set(share.jobs)]));
  const at = (w: string) => before.get(w) ?? before.set(w, new Set()).get(w)!;
  for (const { job, from, to } of moves) {
    if (to !== null) at(to).delete(job);
    if (from !== null) at(from).add(job);
  }
  return Object.fromEntries([...before].map(([w, jobs]) => [w, [...jobs].sort()]));
}
