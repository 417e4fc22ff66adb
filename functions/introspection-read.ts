// Reads what the introspection page shows: the Swarm, its worker config, the
// pending restarts and the last change, all from the API (nothing cached).
// Pending restarts are status's own (computeStatus judged them from the
// bookkeeping and the pods), so the page and status never disagree.
import { DEFAULTS } from '../lib/api/schema.js';
import { readLastChange } from '../lib/decisions/workspace.js';
import type { Swarm } from '../lib/api/types.js';
import type { KubeClient } from '../lib/kube/client.js';
import { swarmView, type SwarmView } from '../lib/introspection/view.js';
import { parse, type WorkerConfig } from '../lib/workerconfig/index.js';

export function readSwarmView(kube: KubeClient) {
  const viewOf = swarmViewOf(kube);
  return async (namespace: string, name: string): Promise<SwarmView | undefined> => {
    const swarm = await kube.getSwarm(namespace, name);
    return swarm ? viewOf(swarm) : undefined;
  };
}

/** The view of a Swarm already read (its ConfigMap read here). */
export function swarmViewOf(kube: KubeClient) {
  return async (swarm: Swarm): Promise<SwarmView> => {
    const namespace = swarm.metadata.namespace ?? '';
    const configMap = swarm.spec?.configMapName ? await kube.getConfigMap(namespace, swarm.spec.configMapName) : undefined;
    let config: WorkerConfig | undefined;
    try {
      const text = configMap?.data[swarm.spec.configKey ?? DEFAULTS.configKey];
      config = text ? parse(text) : undefined;
    } catch {
      config = undefined;
    }
    const annotations = configMap?.annotations ?? {};
    const lastChange = readLastChange(annotations);
    return swarmView({
      swarm,
      ...(config ? { config } : {}),
      pendingRestarts: (swarm.status?.workers ?? []).filter((w) => w.restartPending).map((w) => w.name),
      ...(lastChange ? { lastChange: { version: lastChange.version, moves: lastChange.moves } } : {}),
    });
  };
}
