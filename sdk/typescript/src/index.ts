// The Swarm worker SDK for TypeScript (docs/worker-protocol.md, protocol 1).
export { createWorker, type Logger, type RestartPolicy, type Worker, type WorkerOptions, type WorkerStatus } from './worker.js';
export type { Callbacks, JobContext } from './jobs.js';
export { ApiError, inClusterClient, type InClusterOptions, type KubeClient } from './kube.js';
export { WORKER_PROTOCOL } from '../../../lib/workerconfig/index.js';
