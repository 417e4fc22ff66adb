// The Swarm custom resource (k8slab.info/v1alpha1) as plain TypeScript data.
// The JSON Schema in lib/api/schema.ts is the one source of truth for validation
// and for the CRD; these types mirror it.
import type { JobSpec } from '../assignment/types.js';

export const GROUP = 'k8slab.info';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'Swarm';
export const PLURAL = 'swarms';
export const SINGULAR = 'swarm';
export const SHORT_NAME = 'swm';

export type RestartPolicy = 'Restart' | 'None';
export type Handoff = 'MakeBeforeBreak' | 'BreakBeforeMake';

interface SwarmSpec {
  /** Exactly one of statefulSetName and deploymentName is set (the worker pool: poolOf). */
  statefulSetName?: string;
  deploymentName?: string;
  configMapName: string;
  /** Key inside the ConfigMap; default `config.yml`. */
  configKey?: string;
  /** How many workers; Swarm resizes the StatefulSet (absent: the StatefulSet's own count is followed). */
  replicas?: number;
  workload: { jobs: JobSpec[] };
  restart?: {
    policy?: RestartPolicy;
    handoff?: Handoff;
    maxUnavailable?: number;
    /** Default 600 (lib/api/schema.ts DEFAULTS). */
    progressDeadlineSeconds?: number;
  };
  /** Failure detection (docs/failure-detection.md); unset: none. */
  failover?: { leaseSeconds?: number };
}

/** The controller of a Swarm's worker pods: a StatefulSet (workers `<name>-<ordinal>`) or a Deployment (workers: pod names). */
export interface PoolRef {
  kind: 'StatefulSet' | 'Deployment';
  name: string;
}

/** The pool a spec names (a Deployment when deploymentName is set, else the StatefulSet). */
export function poolOf(spec: Pick<SwarmSpec, 'statefulSetName' | 'deploymentName'> | undefined): PoolRef {
  return spec?.deploymentName !== undefined ? { kind: 'Deployment', name: spec.deploymentName } : { kind: 'StatefulSet', name: spec?.statefulSetName ?? '' };
}

/** metav1.Condition */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export type Phase = 'Pending' | 'Running' | 'Updating' | 'Degraded';

export interface WorkerStatus {
  name: string;
  jobs: number;
  version: number;
  restartPending: boolean;
  /** How status knows this worker runs its share (lib/decisions/coverage.ts). */
  coverage?: 'Acknowledged' | 'Inferred' | 'Uncovered';
  /** The config version this pod acknowledged in its Lease. */
  runningVersion?: number;
}

export interface SwarmStatus {
  observedGeneration?: number;
  phase?: Phase;
  /** The StatefulSet's pods that exist (its status.replicas). */
  replicas?: number;
  readyReplicas?: number;
  /** The StatefulSet's pod label selector (for the scale subresource). */
  selector?: string;
  version?: number;
  /** Jobs no acknowledged (or, unverified, inferred) Ready worker runs. */
  uncoveredJobs?: number;
  /** Jobs covered by inference only, not acknowledged. */
  unverifiedJobs?: number;
  conditions?: Condition[];
  workers?: WorkerStatus[];
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
}

export interface Swarm {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec: SwarmSpec;
  status?: SwarmStatus;
}

/** A Swarm that passed validateSwarm: the schema's defaults are applied, so these fields are always there. */
export interface ValidSwarm extends Swarm {
  spec: SwarmSpec & {
    configKey: string;
    restart: { policy: RestartPolicy; handoff: Handoff; maxUnavailable: number; progressDeadlineSeconds: number };
    failover?: { leaseSeconds: number };
  };
}
