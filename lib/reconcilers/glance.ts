// A glance: the least an event needs read to show it brings nothing new.
// assign's status records what it was judged from (status.observed: digests of
// the pool, its pods, the workers' Leases and the ConfigMap) with the Swarm's
// generation. An event whose own object, read now, digests as recorded (the
// spec observed, the claim still this Swarm's, the ConfigMap as recorded, the
// recorded deadline not passed) finds the world that status describes:
// whatever else changed since that status was written brings its own event (or
// the resync's), which finds its object digesting otherwise and looks at
// everything. Three requests: the Swarms naming the pool (keys.ts lists them
// for the event), the ConfigMap and the event's object (none more for a Swarm
// or ConfigMap event). The whole look would decide as the one that wrote the
// record: nothing to write and, while the ConfigMap records restarts, tell
// `restart` again; so does the glance. Otherwise the whole look follows,
// reusing what the glance read. Durable, unlike settled.ts: any instance glances alike.
import { poolOf, type PoolRef, type Swarm } from '../api/types.js';
import { validateSwarm } from '../api/validate.js';
import { configMapDigest, leasesDigest, podsDigest, poolDigest, type Aspect } from '../decisions/observed.js';
import { claimant, type SwarmKey } from '../decisions/routing.js';
import { readRestarts } from '../decisions/workspace.js';
import type { ConfigMapView, LeaseView, PodView, PoolView } from '../kube/types.js';
import { SWARM_LABEL } from '../workerconfig/index.js';
import type { ReconcileEnv } from './env.js';
import { versionsRead } from './settled.js';

/** Objects a glance read, for the look that follows it (observe.ts): undefined = not read, null = read and absent. */
export interface Glimpsed {
  configMap?: ConfigMapView | null;
  /** The pool as named when read (null: absent). */
  pool?: { ref: PoolRef; view: PoolView | null };
  /** Listed by this selector (the one status recorded). */
  pods?: { selector: string; pods: PodView[] };
  leases?: LeaseView[];
}

/** What an agreeing glance read: `<kind>/<name>` → resourceVersion, and the recorded deadline (settled.ts keeps them). */
export interface GlanceRead {
  pool: PoolRef;
  versions: Map<string, string>;
  until?: string;
}

export type GlanceResult =
  /** `restartsDue`: the ConfigMap records restarts, so the answer tells `restart` again, as a whole look would. */
  | { agrees: true; swarm: Swarm; restartsDue: boolean; read: GlanceRead }
  | { agrees: false; claimants?: readonly Swarm[]; glimpsed: Glimpsed };

/** `aspect`: the object the event is about ('swarm' for the Swarm itself). */
export async function glance(env: ReconcileEnv, key: SwarmKey, claimants: readonly Swarm[] | undefined, aspect: Aspect | 'swarm'): Promise<GlanceResult> {
  const { namespace } = key;
  const listed = claimants?.find((s) => s.metadata.name === key.name);
  const swarm = listed ?? (await env.kube.getSwarm(namespace, key.name));
  const disagrees = (naming = claimants, glimpsed: Glimpsed = {}): GlanceResult => ({ agrees: false, ...(naming ? { claimants: naming } : {}), glimpsed });
  if (!swarm || swarm.metadata.deletionTimestamp) return disagrees();
  const recorded = swarm.status?.observed;
  const generation = swarm.metadata.generation;
  // A spec not yet judged, a status judged under a problem or by another release, or a deadline passed.
  if (!recorded || generation === undefined || swarm.status?.observedGeneration !== generation) return disagrees();
  if (recorded.until && env.now().getTime() >= Date.parse(recorded.until)) return disagrees();
  const validation = validateSwarm(swarm);
  if (!validation.ok) return disagrees();
  const pool = poolOf(validation.swarm.spec);
  // Listed with the Swarm (keys.ts): the list was of its pool.
  const naming = listed && claimants ? claimants : await env.kube.listSwarmsNaming(namespace, pool.name, pool.kind);
  if (claimant(naming, pool.name, pool.kind)?.metadata.uid !== swarm.metadata.uid) return disagrees(naming);

  const selector = swarm.status?.selector;
  const [configMap, fresh] = await Promise.all([
    env.kube.getConfigMap(namespace, validation.swarm.spec.configMapName),
    readAspect(env, namespace, pool, aspect, selector),
  ]);
  const glimpsed: Glimpsed = { configMap: configMap ?? null, ...fresh?.glimpsed };
  if (!configMap || configMapDigest(configMap) !== recorded.configMap) return disagrees(naming, glimpsed);
  if (fresh && fresh.digest !== recorded[fresh.aspect]) return disagrees(naming, glimpsed);
  const versions = versionsRead({ swarm, configMap, pool: glimpsed.pool?.view, pods: glimpsed.pods?.pods, leases: glimpsed.leases });
  const read = { pool, versions, ...(recorded.until ? { until: recorded.until } : {}) };
  return { agrees: true, swarm, restartsDue: readRestarts(configMap.annotations).steps.length > 0, read };
}

async function readAspect(
  env: ReconcileEnv,
  namespace: string,
  pool: PoolRef,
  aspect: Aspect | 'swarm',
  selector: string | undefined,
): Promise<{ aspect: Aspect; digest: string; glimpsed: Glimpsed } | undefined> {
  switch (aspect) {
    case 'pool': {
      const view = (pool.kind === 'Deployment' ? await env.kube.getDeployment(namespace, pool.name) : await env.kube.getStatefulSet(namespace, pool.name)) ?? null;
      return { aspect, digest: view ? poolDigest(view) : 'absent', glimpsed: { pool: { ref: pool, view } } };
    }
    case 'pods': {
      // The pool's selector is immutable; the one status recorded is the one its pods were listed by.
      if (!selector) return { aspect, digest: 'unknown', glimpsed: {} };
      const pods = await env.kube.listPods(namespace, selector);
      return { aspect, digest: podsDigest(pods), glimpsed: { pods: { selector, pods } } };
    }
    case 'leases': {
      const leases = await env.kube.listLeases(namespace, `${SWARM_LABEL}=${pool.name}`);
      return { aspect, digest: leasesDigest(leases), glimpsed: { leases } };
    }
    // The ConfigMap is read for every glance; the Swarm is the list itself.
    default:
      return undefined;
  }
}
