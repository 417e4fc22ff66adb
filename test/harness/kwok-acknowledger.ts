// KWOK's pods run nothing, so they acknowledge nothing; Swarm refuses hot
// reload over a pool whose pods do not acknowledge (lib/api/schema.ts
// POOL_RULES). For the files that need hot-reloading workers over KWOK pools,
// this plays their workers' side of the protocol (docs/worker-protocol.md), as
// a worker that reloads at once would: each Ready pod of a pool acknowledges,
// in the Lease named after it and held by its uid, the share config.yml gives
// it now. The pool's template must declare it (kwokStatefulSetYaml's
// `acknowledges`).
import { CoordinationV1Api, CoreV1Api, KubeConfig, type V1Lease } from '@kubernetes/client-node';
import {
  DIGEST_ANNOTATION,
  LOADED_AT_ANNOTATION,
  PROTOCOL_ANNOTATION,
  SWARM_LABEL,
  VERSION_ANNOTATION,
  WORKER_PROTOCOL,
  jobsDigest,
  leaseName,
  parse,
  type WorkerConfig,
} from '../../lib/workerconfig/index.js';

export interface Acknowledger {
  /** Stops after the pass in flight; resolves once it has. */
  stop(): Promise<void>;
}

/**
 * Every `intervalMs`, the pods of each StatefulSet in `pools()` (selector
 * app=<pool>, its ConfigMap `configMapOf(pool)`, swarmYaml's `<pool>-config`
 * by default, key config.yml) acknowledge their current shares. Errors of one
 * pass (a ConfigMap not written yet, a conflict) are left to the next.
 */
export function acknowledgeKwokPools(
  kubeconfig: string,
  namespace: string,
  pools: () => readonly string[],
  options: { intervalMs?: number; configMapOf?: (pool: string) => string } = {},
): Acknowledger {
  const { intervalMs = 1_000, configMapOf = (pool: string) => `${pool}-config` } = options;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const coordination = kc.makeApiClient(CoordinationV1Api);
  let stopped = false;
  let pass: Promise<void> = Promise.resolve();

  const acknowledgePool = async (pool: string): Promise<void> => {
    const text = (await core.readNamespacedConfigMap({ namespace, name: configMapOf(pool) }).catch(() => undefined))?.data?.['config.yml'];
    if (!text) return;
    let config: WorkerConfig;
    try {
      config = parse(text);
    } catch {
      return;
    }
    const pods = await core.listNamespacedPod({ namespace, labelSelector: `app=${pool}` });
    for (const pod of pods.items) {
      const name = pod.metadata?.name ?? '';
      const uid = pod.metadata?.uid ?? '';
      const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      const share = config.workloads[name];
      if (!ready || pod.metadata?.deletionTimestamp || !share) continue;
      const annotations = {
        [VERSION_ANNOTATION]: String(config.version),
        [DIGEST_ANNOTATION]: jobsDigest(share.jobs),
        [LOADED_AT_ANNOTATION]: new Date().toISOString(),
        [PROTOCOL_ANNOTATION]: WORKER_PROTOCOL,
      };
      const existing = await coordination.readNamespacedLease({ namespace, name: leaseName(name) }).catch(() => undefined);
      const said = existing?.metadata?.annotations ?? {};
      if (existing?.spec?.holderIdentity === uid && said[VERSION_ANNOTATION] === annotations[VERSION_ANNOTATION] && said[DIGEST_ANNOTATION] === annotations[DIGEST_ANNOTATION]) continue;
      const body: V1Lease = {
        metadata: { name: leaseName(name), namespace, labels: { [SWARM_LABEL]: pool }, annotations, ...(existing?.metadata?.resourceVersion ? { resourceVersion: existing.metadata.resourceVersion } : {}) },
        spec: { holderIdentity: uid },
      };
      await (existing ? coordination.replaceNamespacedLease({ namespace, name: leaseName(name), body }) : coordination.createNamespacedLease({ namespace, body }));
    }
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      for (const pool of pools()) await acknowledgePool(pool).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  };
  pass = loop();
  return {
    stop: async () => {
      stopped = true;
      await pass;
    },
  };
}
