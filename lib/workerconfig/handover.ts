// How a worker of a StatefulSet pool, asked to stop under its own name (its pod
// deleted, evicted or rolled), learns whether Swarm hands its jobs over first:
// an annotation on the worker ConfigMap, which the worker reads from the API
// while it drains (sdk/typescript/src/drain.ts). Present ("MakeBeforeBreak") while
// Swarm stages hot-reloading workers' handoffs make-before-break and a serving
// peer can take a stopping worker's jobs: the worker keeps running them until
// its share is empty. Absent: it stops at once (its replacement, of the same
// name, then takes the share over).
export const HANDOVER_ANNOTATION = 'k8slab.info/handover';
export const HANDOVER_VALUE = 'MakeBeforeBreak';
