// Per-instance memory of each Swarm's last settled look: the versions of the
// objects read by a reconcile that found nothing to do (no write, no refresh,
// no resize, no restart recorded), and until when time alone changes nothing
// (a rollout blocker reaching its deadline; at rest, never). An event
// announcing one of those very versions (a redelivery, the source's re-list,
// the echo of a write that look read back, a change it had already read) brings
// nothing new: whatever changed since has its own event, with a version this
// record lacks, and the resync's. It is answered with no reads. A glance that
// finds nothing to do (glance.ts) adds the versions it read.
// Versions, not contents: a copy that merely looks the same may follow a
// change another instance reconciled (a pod Ready, then not, then Ready again).
// An optimisation only: an instance that remembers nothing reads as before.
import type { Trigger } from '../events/types.js';
import type { PoolRef, Swarm } from '../api/types.js';
import type { ConfigMapView, LeaseView, PodView, PoolView } from '../kube/types.js';
import { keyString, poolOfEvent, type SwarmKey } from '../decisions/routing.js';
import type { Observation } from './observation.js';

/** The versions a look read, as the record keeps them: `<kind>/<name>` → resourceVersion (unversioned views are left out). */
export function versionsRead(read: {
  swarm?: Swarm;
  pool?: PoolView | null;
  configMap?: ConfigMapView | null;
  pods?: readonly PodView[];
  leases?: readonly LeaseView[];
}): Map<string, string> {
  const versions = new Map<string, string>();
  const add = (kind: string, name: string, version: string | undefined) => version && versions.set(`${kind}/${name}`, version);
  if (read.swarm) add('Swarm', read.swarm.metadata.name, read.swarm.metadata.resourceVersion);
  if (read.pool) add(read.pool.kind ?? 'StatefulSet', read.pool.name, read.pool.resourceVersion);
  if (read.configMap) add('ConfigMap', read.configMap.name, read.configMap.resourceVersion);
  for (const pod of read.pods ?? []) add('Pod', pod.name, pod.resourceVersion);
  for (const lease of read.leases ?? []) add('Lease', lease.name, lease.resourceVersion);
  return versions;
}

/** Swarms remembered per instance (oldest dropped first); a record is a few dozen strings. */
const MAX_SWARMS = 1024;

export interface SettledLooks {
  /** The event announces a version its Swarm's last settled look in this instance read, and `now` (epoch ms) is before the look's deadline. */
  vouches(trigger: Trigger, now: number): boolean;
  /** `obs`: the look that found the Swarm settled; `until` (RFC 3339): when time alone would change its status. */
  remember(key: SwarmKey, obs: Observation, until?: string): void;
  /**
   * A glance that found nothing to do (glance.ts) adds the versions it read
   * (`<kind>/<name>` → resourceVersion) to the Swarm's record, or starts one;
   * `until`: the deadline of the status it found in force, which the record
   * then holds to (the status it was judged against is the latest).
   */
  note(key: SwarmKey, pool: PoolRef, versions: ReadonlyMap<string, string>, until?: string): void;
  forget(key: SwarmKey): void;
}

interface SettledRecord {
  /** `<namespace>/<kind>/<name>` of its pool, the index entry to drop with it. */
  pool: string;
  /** `<kind>/<name>` → resourceVersion as read. */
  versions: Map<string, string>;
  /** Epoch ms from which the look no longer holds (Infinity: at rest). */
  until: number;
}

export function settledLooks(max = MAX_SWARMS): SettledLooks {
  const records = new Map<string, SettledRecord>();
  /** Pool → the Swarm whose record names it: a pool object's event finds its Swarm without a list. */
  const byPool = new Map<string, string>();
  const poolId = (namespace: string, kind: string, name: string) => `${namespace}/${kind}/${name}`;

  const forget = (id: string) => {
    const record = records.get(id);
    if (!record) return;
    records.delete(id);
    if (byPool.get(record.pool) === id) byPool.delete(record.pool);
  };

  const keep = (id: string, pool: string, versions: Map<string, string>, until: number) => {
    records.set(id, { pool, versions, until });
    byPool.set(pool, id);
    // Oldest first (a Map iterates in insertion order; a remembered Swarm is re-inserted).
    for (const oldest of records.keys()) {
      if (records.size <= max) break;
      forget(oldest);
    }
  };

  return {
    vouches(trigger, now) {
      if (trigger.source !== 'apiserver' || trigger.verb === 'delete' || !trigger.resourceVersion) return false;
      const pool = poolOfEvent(trigger);
      const id =
        trigger.kind === 'Swarm'
          ? keyString(trigger)
          : trigger.kind === 'ConfigMap'
            ? trigger.swarm && keyString({ namespace: trigger.namespace, name: trigger.swarm })
            : pool && byPool.get(poolId(trigger.namespace, pool.kind, pool.name));
      const record = id ? records.get(id) : undefined;
      return !!record && now < record.until && record.versions.get(`${trigger.kind}/${trigger.name}`) === trigger.resourceVersion;
    },

    remember(key, obs, until) {
      const id = keyString(key);
      forget(id);
      const pool = obs.statefulSet;
      const swarmVersion = obs.swarm.metadata.resourceVersion;
      const deadline = until === undefined ? Infinity : Date.parse(until);
      if (!pool?.resourceVersion || !swarmVersion || Number.isNaN(deadline)) return;
      const versions = versionsRead({ swarm: obs.swarm, pool, configMap: obs.configMap, ...obs.workers });
      keep(id, poolId(key.namespace, pool.kind ?? 'StatefulSet', pool.name), versions, deadline);
    },

    note(key, pool, versions, until) {
      const id = keyString(key);
      const deadline = until === undefined ? Infinity : Date.parse(until);
      if (Number.isNaN(deadline)) return;
      const poolKey = poolId(key.namespace, pool.kind, pool.name);
      const record = records.get(id);
      const kept = record?.pool === poolKey ? record : undefined;
      forget(id);
      keep(id, poolKey, new Map([...(kept?.versions ?? []), ...versions]), deadline);
    },

    forget: (key) => forget(keyString(key)),
  };
}
