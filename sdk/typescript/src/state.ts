// The worker's state transition on each config read: pure, so the reload
// rules are tested without files or timers.
import { diffShares, EMPTY_SHARE, shareOf, type Share, type ShareChange, type WorkloadsView } from './share.js';

export interface WorkerState {
  readonly share: Share;
  readonly configVersion: number | undefined;
  readonly loadedAt: string | undefined;
  /** Set once the worker stopped its jobs to exit: later config reads start nothing. */
  readonly stopping: boolean;
}

export const INITIAL_STATE: WorkerState = { share: EMPTY_SHARE, configVersion: undefined, loadedAt: undefined, stopping: false };

export type Transition =
  | { readonly kind: 'changed'; readonly state: WorkerState; readonly change: ShareChange }
  | { readonly kind: 'unchanged'; readonly state: WorkerState }
  /** A config that does not parse: keep running what we have rather than drop everything. */
  | { readonly kind: 'rejected'; readonly state: WorkerState; readonly error: string };

/**
 * Next state after reading `text` (undefined: no config file, i.e. the
 * ConfigMap does not exist (yet, or any more) and this worker owns nothing).
 */
export function nextState(
  state: WorkerState,
  text: string | undefined,
  podName: string,
  parse: (text: string) => WorkloadsView,
  now: Date,
): Transition {
  if (state.stopping) return { kind: 'unchanged', state };
  let config: WorkloadsView | undefined;
  if (text !== undefined) {
    try {
      config = parse(text);
    } catch (error) {
      return { kind: 'rejected', state, error: error instanceof Error ? error.message : String(error) };
    }
  }
  const share = config ? shareOf(config, podName) : EMPTY_SHARE;
  const next: WorkerState = { share, configVersion: config?.version, loadedAt: now.toISOString(), stopping: false };
  const change = diffShares(state.share, share);
  if (change.gained.length === 0 && change.lost.length === 0 && share.version === state.share.version) {
    return { kind: 'unchanged', state: next };
  }
  return { kind: 'changed', state: next, change };
}

/**
 * Stopping to exit (SIGTERM): every running job is lost. The share keeps its
 * version so the stop reports say which version had been running.
 */
export function stopAll(state: WorkerState): Transition & { readonly kind: 'changed' } {
  return {
    kind: 'changed',
    state: { ...state, share: { jobs: [], version: state.share.version }, stopping: true },
    change: { gained: [], lost: state.share.jobs, kept: [] },
  };
}
