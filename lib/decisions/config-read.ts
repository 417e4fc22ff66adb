// config.yml as found in a worker ConfigMap: parsed once, with the text Swarm
// would write for it and who owns what in it computed on demand.
import { assignmentOf, parse, render, type WorkerConfig } from '../workerconfig/index.js';
import type { Assignment } from '../assignment/types.js';

/** config.yml as found in a ConfigMap: parsed, and `rendered` the text Swarm writes for it (computed on demand). */
export interface ConfigRead {
  previous?: WorkerConfig;
  /** Set when the text could not be parsed (it is replaced). */
  malformed?: string;
  rendered?: () => string;
  /** Who owns what in `previous` (assignmentOf), computed on demand, once per read. */
  assignment?: () => Assignment;
}

/**
 * Reads config.yml. Pure; the assign reconciler passes one that remembers its
 * answer per ConfigMap uid+resourceVersion (parsing thousands of jobs is the
 * costliest step of a no-op reconcile), the decision is the same either way.
 */
export type ConfigReader = (text: string | undefined) => ConfigRead;

export const readConfig: ConfigReader = (text) => {
  // A placeholder ConfigMap (no key, or an empty document) is a first assignment.
  if (text === undefined || text.trim() === '' || text.trim() === '{}') return {};
  let previous: WorkerConfig;
  try {
    previous = parse(text);
  } catch (err) {
    return { malformed: err instanceof Error ? err.message : String(err) };
  }
  let rendered: string | undefined;
  let assignment: Assignment | undefined;
  return { previous, rendered: () => (rendered ??= render(previous)), assignment: () => (assignment ??= assignmentOf(previous)) };
};
