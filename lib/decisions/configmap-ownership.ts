// Who owns a worker ConfigMap: this Swarm's controller reference, added in
// place, and another controller's, which a Swarm never writes over.
import { API_VERSION, KIND, type Swarm } from '../api/types.js';
import type { ConfigMapView, OwnerReference } from '../kube/types.js';

/** This Swarm as the ConfigMap's controller. */
export const ownerReferenceTo = (swarm: Swarm): OwnerReference => ({
  apiVersion: API_VERSION,
  kind: KIND,
  name: swarm.metadata.name,
  uid: swarm.metadata.uid ?? '',
  controller: true,
});

/** The controller owner of a ConfigMap, when it is something other than this Swarm. */
export function foreignController(configMap: ConfigMapView, swarm: Swarm): OwnerReference | undefined {
  return configMap.ownerReferences.find((o) => o.controller && o.uid !== swarm.metadata.uid);
}

/** Our controller reference, in place if present (so an unchanged list compares equal). */
export function withOwner(refs: readonly OwnerReference[], ours: OwnerReference): OwnerReference[] {
  const i = refs.findIndex((o) => o.uid === ours.uid);
  return i < 0 ? [...refs, ours] : refs.map((o, j) => (j === i ? { ...o, ...ours } : o));
}
