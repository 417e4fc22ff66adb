// The worker's state transition on each config read: pure, so the reload
// rules are tested without files or timers.
import { diffShares, EMPTY_SHARE, shareOf, type Share, type ShareChange, type WorkloadsView } from './share.js';

export interface WorkerState {
  readonly share: Share;
  readonly configVersion: number | undefined;
  readonly loadedAt: string | undefined;
}

export const INITIAL_STATE: WorkerState = { share: EMPTY_SHARE, configVersion: undefined, loadedAt: undefined };

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
  let config: WorkloadsView | undefined;
  if (text !== undefined) {
    try {
      config = parse(text);
    } catch (error) {
      return { kind: 'rejected', state, error: error instanceof Error ? error.message : String(error) };
    }
  }
  const share = config ? shareOf(config, podName) : EMPTY_SHARE;
  const next: WorkerState = { share, configVersion: config?.version, loadedAt: now.toISOString() };
  const change = diffShares(state.share, share);
  if (change.gained.length === 0 && change.lost.length === 0 && share.version === state.share.version) {
    return { kind: 'unchanged', state: next };
  }
  return { kind: 'changed', state: next, change };
}
