// The one JSON Schema for the Swarm custom resource. ajv validates against it as
// written (lib/api/validate.ts); the CRD's openAPIV3Schema is a mechanical
// transformation of it (lib/api/structural.ts). Write it in the subset both sides
// understand: draft-07 keywords that OpenAPI v3.0 also has, plus x-kubernetes-*
// extensions (declared to ajv as annotation keywords). The one construct the CRD
// cannot express, a union of differently typed branches (a job is a string or an
// object), is written as a plain `anyOf` here and rewritten by the transformation.

import { FAILOVER_LEASE_SECONDS } from '../workerconfig/failover.js';
import {
  DNS_LABEL_MAX_LENGTH,
  DNS_LABEL_MEANING,
  DNS_LABEL_PATTERN as DNS_LABEL,
  DNS_SUBDOMAIN_MAX_LENGTH,
  DNS_SUBDOMAIN_MEANING,
  DNS_SUBDOMAIN_PATTERN as DNS_SUBDOMAIN,
} from './names.js';

/** A JSON Schema node, loosely typed: the schema is data, read by ajv and the CRD generator. */
export type SchemaNode = { [keyword: string]: unknown };

/**
 * Limits users can rely on; also what keeps the CRD's CEL cost estimates bounded.
 * Chosen so they hold together with the API server's own limits (KUBERNETES_LIMITS):
 * the largest Swarm these allow — maxJobs object jobs {name, weight, dedicated} with
 * names of jobNameMaxLength ASCII characters, a status listing maxWorkers workers and
 * the managedFields the API server adds for them — is about 1.2 MB, under etcd's
 * 1.5 MiB request limit with room for ordinary metadata (test/unit/api-limits.test.ts
 * computes it). It is far above the 256 KiB that client-side `kubectl apply` can keep
 * in its last-applied annotation, hence `kubectl apply --server-side` in docs/operations.md.
 * Its config.yml (about 700 KB for plain names) fits a ConfigMap; names that need
 * YAML quoting or many multi-byte characters can still exceed 1 MiB, which is why
 * the function measures the ConfigMap before writing it (ConfigMapTooLarge).
 */
export const LIMITS = {
  jobNameMaxLength: 128,
  maxJobs: 5_000,
  minWeight: 1,
  maxWeight: 1000,
  minMaxUnavailable: 1,
  /** StatefulSet names above 52 characters break the pods' controller-revision-hash label (63). */
  statefulSetNameMaxLength: 52,
  /** Deployment names above 52 characters leave no room in its pods' names (`<deployment>-<hash>-<5>`, 63). */
  deploymentNameMaxLength: 52,
  configMapNameMaxLength: DNS_SUBDOMAIN_MAX_LENGTH,
  configKeyMaxLength: 253,
  maxConditions: 16,
  /** Replicas a Swarm manages: status lists every worker, and the status must stay storable. */
  maxWorkers: 1_000,
  /** Our condition messages are cut to this many characters (metav1.Condition allows 32768 bytes). */
  conditionMessageMaxLength: 4_096,
  /** Worker names spelled out in a condition message before "… and N more". */
  workersNamedInMessages: 20,
  /**
   * Validation problems listed before "… and N more problems": they end up in a
   * Condition message and in front of a person, who needs the first few, not thousands.
   */
  problemsListed: 20,
  /** A week: a longer rollout deadline is no deadline. */
  maxProgressDeadlineSeconds: 604_800,
} as const;

/** The API server's limits Swarm must stay within (Kubernetes' defaults). */
export const KUBERNETES_LIMITS = {
  /** etcd's default --max-request-bytes: the largest object the API server can store. */
  etcdRequestBytes: 1.5 * 1024 * 1024,
  /** ConfigMap data + binaryData, in bytes (core/v1 validation, MaxSecretSize). */
  configMapDataBytes: 1024 * 1024,
  /** All annotations of one object together, keys and values, in bytes. */
  annotationsBytes: 256 * 1024,
  /** metav1.Condition message, in bytes. */
  conditionMessageBytes: 32_768,
} as const;

export const DEFAULTS = {
  configKey: 'config.yml',
  restartPolicy: 'None',
  handoff: 'MakeBeforeBreak',
  maxUnavailable: 1,
  /** A rollout blocked this long is Degraded (RolloutStuck), like a Deployment's progressDeadlineSeconds. */
  progressDeadlineSeconds: 600,
} as const;

/** What the API server answers when an immutable field is changed (CEL `self == oldSelf`). */
const IMMUTABLE_MESSAGES = {
  statefulSetName: 'statefulSetName is immutable: create a new Swarm to manage another StatefulSet',
  configMapName: 'configMapName is immutable: create a new Swarm to publish to another ConfigMap',
  deploymentName: 'deploymentName is immutable: create a new Swarm to manage another Deployment',
  handoff:
    'restart.handoff is immutable: a hand-off in flight under one cannot be finished under the other without a moment where neither promise holds; create a new Swarm (its own ConfigMap) to use the other',
} as const;

/**
 * Rules over the spec as a whole: CEL in the CRD (the API server refuses the
 * object), and the same rules in lib/api/validate.ts (`specRuleProblems`), so
 * a Swarm that reached the function some other way is refused alike.
 */
export const SPEC_RULES = {
  onePool: {
    rule: 'has(self.statefulSetName) != has(self.deploymentName)',
    message: 'exactly one of statefulSetName and deploymentName must be set',
  },
  /** A pool kind never changes on a live Swarm: the running workers would be disconnected. */
  poolKindImmutable: {
    rule: 'has(self.deploymentName) == has(oldSelf.deploymentName)',
    message: 'the pool kind is immutable: create a new Swarm to switch between a StatefulSet and a Deployment',
  },
  /**
   * A Deployment's pod comes back under a new name, so a restart cannot make
   * "the same worker" reload: its workers hot-reload (policy None).
   */
  deploymentHotReloads: {
    rule: '!has(self.deploymentName) || (has(self.restart) && has(self.restart.policy) && self.restart.policy == "None")',
    message: 'a Deployment pool needs restart.policy None (its workers hot-reload: a deleted pod comes back under a new name)',
  },
  /**
   * Restarting a worker stops every job it runs, the ones it keeps included,
   * so no order of restarts keeps every job running: restarts break first.
   */
  /**
   * Failover hands an expired worker's jobs to its peers, and back once it renews, by staged hand-offs:
   * restart-only workers take a new share only by being restarted, so covering one failure would stop
   * every job of the healthy peers too.
   */
  failoverHotReloads: {
    rule: '!has(self.failover) || (has(self.restart) && has(self.restart.policy) && self.restart.policy == "None")',
    message: 'spec.failover needs restart.policy None: failover hands an expired worker\'s jobs to peers that reload their share; restarting the peers to take them would stop every job they run',
  },
  /** failover.yml sits beside the config in the same ConfigMap. */
  failoverKeyFree: {
    rule: '!has(self.failover) || !has(self.configKey) || self.configKey != "failover.yml"',
    message: 'configKey failover.yml is taken by spec.failover: choose another key',
  },
  restartBreaksFirst: {
    rule: '!has(self.restart) || !has(self.restart.policy) || self.restart.policy != "Restart" || (has(self.restart.handoff) && self.restart.handoff == "BreakBeforeMake")',
    message:
      'restart.policy Restart needs restart.handoff BreakBeforeMake: a restarted worker stops every job it runs, kept ones included, so make-before-break cannot hold (for make-before-break use policy None with workers that reload their share)',
  },
} as const;

/**
 * Rules over the spec and its pool together. Not CEL: the API server cannot
 * read the pool when it admits a Swarm, so every look checks them
 * (lib/api/validate.ts `poolRuleProblem`), and a Swarm that breaks one is
 * refused like an invalid spec (Ready=False with the rule's reason, Degraded,
 * a Warning Event; nothing else written).
 */
export const POOL_RULES = {
  /**
   * A hot-reloading worker picks up its share when its kubelet delivers it,
   * which nothing outside the pod can observe: neither a staged handoff nor
   * status can be proven unless the worker says what it runs (its Lease).
   */
  hotReloadAcknowledges: {
    reason: 'AcknowledgementRequired',
    message:
      'restart.policy None needs workers that acknowledge what they run: label the pool\'s pod template k8slab.info/acknowledges: lease and have each worker keep its Lease (docs/worker-protocol.md), or use restart.policy Restart with workers that read their share at start only',
  },
} as const;

/** Printable characters only: a job name ends up as a YAML key/value in every worker's config. */
const JOB_NAME_PATTERN = '^[^\\x00-\\x1f\\x7f]+$';
const CONFIG_MAP_KEY = '^[-._a-zA-Z0-9]+$';

/** What each pattern means, for error messages a person can act on. */
export const PATTERN_MEANINGS: Readonly<Record<string, string>> = {
  [JOB_NAME_PATTERN]: 'must not contain control characters',
  [DNS_LABEL]: DNS_LABEL_MEANING,
  [DNS_SUBDOMAIN]: DNS_SUBDOMAIN_MEANING,
  [CONFIG_MAP_KEY]: 'must consist of letters, digits, "-", "_" and "."',
};

const jobName: SchemaNode = {
  type: 'string',
  minLength: 1,
  maxLength: LIMITS.jobNameMaxLength,
  pattern: JOB_NAME_PATTERN,
};

// No `default` inside the union: ajv cannot apply it there (the assignment layer does).
const job: SchemaNode = {
  description: 'A job: its name, or {name, weight, dedicated}.',
  anyOf: [
    jobName,
    {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: { ...jobName, description: 'Unique job name.' },
        weight: {
          description: 'Relative cost of the job (default 1); balancing is by total weight.',
          type: 'integer',
          minimum: LIMITS.minWeight,
          maximum: LIMITS.maxWeight,
        },
        dedicated: {
          description: 'Ask for a worker of its own (default false; honoured when there are enough workers).',
          type: 'boolean',
        },
      },
    },
  ],
};

const spec: SchemaNode = {
  type: 'object',
  required: ['configMapName', 'workload'],
  additionalProperties: false,
  'x-kubernetes-validations': Object.values(SPEC_RULES).map(({ rule, message }) => ({ rule, message })),
  properties: {
    // Immutable: renaming either on a live Swarm would leave the running
    // workers reading a ConfigMap nobody updates any more.
    statefulSetName: {
      description: 'The StatefulSet whose pods run the jobs (same namespace); exclusive with deploymentName. Immutable.',
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.statefulSetNameMaxLength,
      pattern: DNS_LABEL,
      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: IMMUTABLE_MESSAGES.statefulSetName }],
    },
    deploymentName: {
      description:
        'The Deployment whose pods run the jobs (same namespace), instead of a StatefulSet; workers are keyed by pod name and hot-reload (restart.policy None). Immutable.',
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.deploymentNameMaxLength,
      pattern: DNS_LABEL,
      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: IMMUTABLE_MESSAGES.deploymentName }],
    },
    configMapName: {
      description: 'The ConfigMap the workers read their share from (same namespace). Immutable.',
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.configMapNameMaxLength,
      pattern: DNS_SUBDOMAIN,
      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: IMMUTABLE_MESSAGES.configMapName }],
    },
    replicas: {
      description:
        'How many workers (pods) the Swarm runs; Swarm resizes the StatefulSet through its scale subresource, ' +
        'writing the new shares before it grows and shrinking only once the survivors cover every job. ' +
        'The target of `kubectl scale swm` and of autoscalers. Unset: the StatefulSet\'s own replicas are followed.',
      type: 'integer',
      minimum: 0,
      maximum: LIMITS.maxWorkers,
    },
    configKey: {
      description: 'The key inside the ConfigMap.',
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.configKeyMaxLength,
      pattern: CONFIG_MAP_KEY,
      default: DEFAULTS.configKey,
    },
    workload: {
      description: 'What the workers share: the jobs.',
      type: 'object',
      required: ['jobs'],
      additionalProperties: false,
      properties: {
        jobs: {
          description: 'The jobs to spread over the pods; names must be unique.',
          type: 'array',
          maxItems: LIMITS.maxJobs,
          items: job,
        },
      },
    },
    restart: {
      description: 'How pods whose share changed pick up the change.',
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        policy: {
          description: 'None (default): workers reload their share themselves, handed over in stages through the ConfigMap. Restart: delete the pod so the StatefulSet recreates it (needs handoff BreakBeforeMake).',
          type: 'string',
          enum: ['Restart', 'None'],
          default: DEFAULTS.restartPolicy,
        },
        handoff: {
          description: 'MakeBeforeBreak (default): a moved job runs on its new owner before its old owner stops it. BreakBeforeMake: its old owner stops it first, so it never has two owners. Immutable.',
          type: 'string',
          enum: ['MakeBeforeBreak', 'BreakBeforeMake'],
          default: DEFAULTS.handoff,
          // Immutable: the simulator found switches mid hand-off that neither promise survives (docs/design.md).
          'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: IMMUTABLE_MESSAGES.handoff }],
        },
        maxUnavailable: {
          description: 'How many pods may be restarting at once.',
          type: 'integer',
          minimum: LIMITS.minMaxUnavailable,
          default: DEFAULTS.maxUnavailable,
        },
        progressDeadlineSeconds: {
          description:
            'Seconds a rollout may stay blocked (counted from when its config version was written, or the blocking pod started) before the Swarm is Degraded with reason RolloutStuck, naming the blocking pod.',
          type: 'integer',
          minimum: 1,
          maximum: LIMITS.maxProgressDeadlineSeconds,
          default: DEFAULTS.progressDeadlineSeconds,
        },
      },
    },
    failover: {
      description:
        'Failure detection (docs/failure-detection.md). Set: the workers renew a heartbeat Lease and fence themselves when they cannot ' +
        '(under BreakBeforeMake they stop their jobs first), and a worker whose pod turns NotReady hands its jobs to serving peers until it is Ready again. ' +
        'Unset: no failure detection (published to the workers in the ConfigMap key failover.yml).',
      type: 'object',
      additionalProperties: false,
      properties: {
        leaseSeconds: {
          description:
            'The heartbeat Lease\'s duration: a worker renews every third of it and fences itself at two thirds (its renew deadline). ' +
            'The workers\' readiness probe must turn a pod NotReady no sooner than that deadline: (failureThreshold - 1) x periodSeconds >= 2/3 of it, plus the clock-drift margin.',
          type: 'integer',
          minimum: FAILOVER_LEASE_SECONDS.min,
          maximum: FAILOVER_LEASE_SECONDS.max,
          default: FAILOVER_LEASE_SECONDS.default,
        },
      },
    },
  },
};

/** metav1.Condition, as the apiserver's own types declare it. */
const condition: SchemaNode = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: { type: 'string', minLength: 1, maxLength: 316 },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' },
    message: { type: 'string', maxLength: 32768 },
  },
};

const workerStatus: SchemaNode = {
  type: 'object',
  required: ['name', 'jobs', 'version', 'restartPending'],
  properties: {
    name: { type: 'string', description: 'Pod name.', maxLength: DNS_LABEL_MAX_LENGTH },
    jobs: { type: 'integer', description: 'Number of jobs assigned.', minimum: 0 },
    version: { type: 'integer', description: 'Version of this worker’s share.', minimum: 0 },
    restartPending: { type: 'boolean', description: 'The share changed and the pod has not restarted yet.' },
    coverage: {
      type: 'string',
      enum: ['Acknowledged', 'Inferred', 'Uncovered'],
      description: 'Acknowledged: its Lease says it runs its share. Inferred (unverified): a restart-only pod (restart.policy Restart) that does not acknowledge; Ready, no restart pending, and started after its share was written (lib/decisions/coverage.ts). Uncovered: neither.',
    },
    runningVersion: { type: 'integer', description: 'The config version this pod acknowledged in its Lease.', minimum: 0 },
  },
};

const status: SchemaNode = {
  type: 'object',
  properties: {
    observedGeneration: { type: 'integer', description: 'The metadata.generation this status was judged from.', minimum: 0 },
    phase: {
      type: 'string',
      description:
        'Pending: no config written yet, a worker pod not Ready, or the pool not found. Updating: restarts, acknowledgements or a handoff in flight. Running: converged. Degraded: a problem stands (the conditions say which).',
      enum: ['Pending', 'Running', 'Updating', 'Degraded'],
    },
    replicas: { type: 'integer', description: 'Pods of the StatefulSet that exist (its status.replicas): the scale subresource\'s status.replicas.', minimum: 0 },
    readyReplicas: { type: 'integer', description: 'Worker pods that are Ready.', minimum: 0 },
    selector: { type: 'string', description: 'The StatefulSet\'s pod label selector: the scale subresource\'s selector (HPA, KEDA).', maxLength: 4096 },
    version: { type: 'integer', description: 'Top-level version of the published config; kept when the ConfigMap is lost, so the next version is above it.', minimum: 0 },
    uncoveredJobs: { type: 'integer', description: 'Jobs no acknowledged (or, unverified, inferred) Ready worker runs.', minimum: 0 },
    unverifiedJobs: { type: 'integer', description: 'Jobs covered by inference only, not acknowledged.', minimum: 0 },
    conditions: {
      description: 'Ready, Progressing and Degraded (metav1.Condition); the reason says why.',
      type: 'array',
      maxItems: LIMITS.maxConditions,
      items: condition,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
    workers: {
      description: 'One entry per worker of the config in force: its share, and whether it runs it.',
      type: 'array',
      maxItems: LIMITS.maxWorkers,
      items: workerStatus,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    },
  },
};

/** The whole Swarm object. metadata is the apiserver's to validate; ajv only checks what we read. */
export const swarmSchema: SchemaNode = {
  description: 'Swarm spreads a list of jobs over the pods of a StatefulSet.',
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: {
      type: 'object',
      required: ['name', 'namespace'],
      properties: { name: { type: 'string', minLength: 1 }, namespace: { type: 'string', minLength: 1 } },
    },
    spec,
    status,
  },
};

/** Keywords ajv must accept as annotations (they mean something to the apiserver only). */
export const KUBERNETES_KEYWORDS = [
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
] as const;
