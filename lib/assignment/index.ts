export type { AssignInput, AssignResult, Assignment, Job, JobSpec, UnhonouredDedication } from './types.js';
export { assign } from './assign.js';
export { lowerBound, type LowerBound } from './lower-bound.js';
export { AssignmentInputError } from './errors.js';
export { toJob, compareNames } from './jobs.js';
export { parseJobList } from './job-list.js';
export { hash32 } from './hash.js';
export { compareWorkers, ordinalOf, sortWorkers, workerName } from './workers.js';
