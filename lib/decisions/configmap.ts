// The assign function's decision: the desired worker ConfigMap for a Swarm,
// built from the spec, the StatefulSet's replica count and the ConfigMap as it
// is now (its current assignment is the sticky input of the assigner, and its
// annotations are the restart workspace). Pure: observations in, decision out.
import { API_VERSION, KIND, type Swarm } from '../api/types.js';
import { assign } from '../assignment/index.js';
import type { UnhonouredDedication } from '../assignment/types.js';
import type { ConfigMapView, OwnerReference, PodView, StatefulSetView } from '../kube/types.js';
import { diff, restartOrder, type RestartStep as PlanStep } from '../plan/index.js';
import { assignmentOf, nextConfig, parse, render, type WorkerConfig } from '../workerconfig/index.js';
import { jsonEqual } from './equal.js';
import { ordinalOf, podsByWorker } from './workers.js';
import {
  LABEL_MANAGED_BY,
  LABEL_SWARM,
  MANAGED_BY,
  readRestarts,
  withLastChange,
  withRestarts,
  type Move,
  type RestartWorkspace,
} from './workspace.js';

export interface AssignObservation {
  /** Validated, defaults applied. */
  swarm: Swarm;
  statefulSet: StatefulSetView;
  configMap: ConfigMapView | undefined;
  pods: readonly PodView[];
}

export type AssignDecision =
  | { kind: 'blocked'; reason: 'ConfigMapConflict'; message: string }
  | {
      kind: 'converge';
      /** What to do with the API: nothing when the observed ConfigMap already is the desired one. */
      write: 'create' | 'update' | 'none';
      configMap: ConfigMapView;
      config: WorkerConfig;
      /** The assignment changed (the config version was bumped). */
      changed: boolean;
      changedWorkers: string[];
      moves: Move[];
      unhonoured: readonly UnhonouredDedication[];
      /** Set when the config found in the ConfigMap could not be parsed (it is replaced). */
      malformedPrevious?: string;
    };

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

export function decideConfigMap(obs: AssignObservation): AssignDecision {
  const { swarm, statefulSet, configMap } = obs;
  const spec = swarm.spec;
  const key = spec.configKey ?? 'config.yml';

  if (configMap) {
    const other = foreignController(configMap, swarm);
    if (other) {
      return {
        kind: 'blocked',
        reason: 'ConfigMapConflict',
        message: `ConfigMap ${configMap.name} is controlled by ${other.kind} ${other.name} (uid ${other.uid}), not by this Swarm`,
      };
    }
  }

  const { previous, malformed } = readPreviousConfig(configMap?.data[key]);
  const previousAssignment = previous ? assignmentOf(previous) : undefined;
  const result = assign({
    statefulSetName: statefulSet.name,
    replicas: statefulSet.replicas,
    jobs: spec.workload.jobs,
    ...(previousAssignment ? { previous: previousAssignment } : {}),
  });
  const config = nextConfig(previous, result.assignment);
  const changed = !previous || config.version !== previous.version;
  const plan = diff(previousAssignment ?? {}, result.assignment);

  let annotations = { ...(configMap?.annotations ?? {}) };
  if (changed) {
    annotations = withLastChange(annotations, { version: config.version, moves: plan.moves });
    const restarts =
      (spec.restart?.policy ?? 'Restart') === 'Restart'
        ? restartWorkspace(readRestarts(annotations), restartOrder(plan, spec.restart?.handoff ?? 'MakeBeforeBreak'), obs, config.version)
        : { version: config.version, steps: [] };
    annotations = withRestarts(annotations, restarts);
  }

  const desired: ConfigMapView = {
    name: spec.configMapName,
    namespace: swarm.metadata.namespace,
    ...(configMap?.uid ? { uid: configMap.uid } : {}),
    ...(configMap?.resourceVersion ? { resourceVersion: configMap.resourceVersion } : {}),
    labels: { ...(configMap?.labels ?? {}), [LABEL_SWARM]: swarm.metadata.name, [LABEL_MANAGED_BY]: MANAGED_BY },
    annotations,
    ownerReferences: withOwner(configMap?.ownerReferences ?? [], ownerReferenceTo(swarm)),
    data: { ...(configMap?.data ?? {}), [key]: render(config) },
    ...(configMap?.binaryData ? { binaryData: configMap.binaryData } : {}),
  };

  const write = !configMap ? 'create' : sameManagedContent(configMap, desired) ? 'none' : 'update';
  return {
    kind: 'converge',
    write,
    configMap: desired,
    config,
    changed,
    changedWorkers: changed ? [...plan.changedWorkers] : [],
    moves: changed ? plan.moves.map((m) => ({ job: m.job, from: m.from, to: m.to })) : [],
    unhonoured: result.unhonouredDedications,
    ...(malformed ? { malformedPrevious: malformed } : {}),
  };
}

function readPreviousConfig(text: string | undefined): { previous?: WorkerConfig; malformed?: string } {
  // A placeholder ConfigMap (no key, or an empty document) is a first assignment.
  if (text === undefined || text.trim() === '' || text.trim() === '{}') return {};
  try {
    return { previous: parse(text) };
  } catch (err) {
    return { malformed: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Pending restarts after a change: the workers whose share changed now, each
 * pinned to the uid of the pod that holds the older share, plus earlier steps
 * whose pod has still not been restarted.
 */
export function restartWorkspace(
  previous: RestartWorkspace,
  order: readonly PlanStep[],
  obs: Pick<AssignObservation, 'statefulSet' | 'pods'>,
  version: number,
): RestartWorkspace {
  const { name: sts, replicas } = obs.statefulSet;
  const pods = podsByWorker(sts, replicas, obs.pods);
  const inPlan = new Set(order.map((s) => s.worker));
  // A gainer may be a brand-new worker with no pod yet: waiting for it is the point.
  const exists = (w: string) => (ordinalOf(sts, w) ?? Infinity) < replicas;
  const carried = previous.steps.filter((s) => !inPlan.has(s.worker) && pods.get(s.worker)?.uid === s.staleUid);
  const fresh = order.flatMap((s) => {
    const pod = pods.get(s.worker);
    // No pod: the StatefulSet will create one, and it will read the new share.
    return pod ? [{ worker: s.worker, staleUid: pod.uid, waitFor: [...s.waitFor] }] : [];
  });
  const steps = [...carried, ...fresh].map((s) => ({ ...s, waitFor: s.waitFor.filter(exists) }));
  return { version, steps };
}

/** Our controller reference, in place if present (so an unchanged list compares equal). */
function withOwner(refs: readonly OwnerReference[], ours: OwnerReference): OwnerReference[] {
  const i = refs.findIndex((o) => o.uid === ours.uid);
  return i < 0 ? [...refs, ours] : refs.map((o, j) => (j === i ? { ...o, ...ours } : o));
}

function sameManagedContent(observed: ConfigMapView, desired: ConfigMapView): boolean {
  return (
    jsonEqual(observed.data, desired.data) &&
    jsonEqual(observed.labels, desired.labels) &&
    jsonEqual(observed.annotations, desired.annotations) &&
    jsonEqual(observed.ownerReferences, desired.ownerReferences)
  );
}
