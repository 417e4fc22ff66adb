// Which spec a config was decided from: the Swarm's uid and generation, recorded
// on the ConfigMap in the same guarded write as the config. A reconcile whose
// Swarm read is older than the config in force (it read the Swarm, then another
// instance wrote a config from a newer spec before it read the ConfigMap) would
// take the config back to the older spec — jobs just added removed, then added
// again — and its guarded write cannot tell: the ConfigMap it read is current.
// The API server bumps the generation on every spec change, so the record names it.
import type { Swarm } from '../api/types.js';

export const SPEC_GENERATION_ANNOTATION = 'k8slab.info/spec-generation';

/** The record for this Swarm's spec as read: `<uid>/<generation>`; none without either. */
export function specGenerationOf(swarm: Pick<Swarm, 'metadata'>): string | undefined {
  const { uid, generation } = swarm.metadata;
  return uid && generation !== undefined ? `${uid}/${generation}` : undefined;
}

/** The config in force was decided from a newer spec of this same Swarm than the one read. */
export function specReadIsOlder(annotations: Readonly<Record<string, string>>, swarm: Pick<Swarm, 'metadata'>): boolean {
  const recorded = /^(.+)\/(\d+)$/.exec(annotations[SPEC_GENERATION_ANNOTATION] ?? '');
  const { uid, generation } = swarm.metadata;
  return !!recorded && !!uid && generation !== undefined && recorded[1] === uid && Number(recorded[2]) > generation;
}
