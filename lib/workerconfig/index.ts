export type { WorkerConfig, WorkerShare } from './types.js';
export { canonical, render } from './render.js';
export { parse, WorkerConfigError } from './parse.js';
export { assignmentOf, nextConfig, type HandoffMarks } from './versions.js';
export { jobsDigest } from './digest.js';
export * from './acknowledgement.js';
export { HANDOVER_ANNOTATION, HANDOVER_VALUE } from './handover.js';
export * from './failover.js';
