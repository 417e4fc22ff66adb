// Restart's intents: the pods a `restart` reconcile is about to delete, written
// to the worker ConfigMap (guarded by the resourceVersion it decided from)
// before it deletes any. Two instances deciding at once from reads a few
// milliseconds apart could otherwise each take a different pod out of service
// (one read before a worker acknowledged, the other after, so each found a
// different step due) and together exceed maxUnavailable. With the intent
// written first, the later one either meets a 409 and reads again, or reads the
// intent and counts that pod as out of service already.
//
// An intent is void after INTENT_TTL_MS: by then its delete landed (the pod is
// terminating or gone) or never will (the instance died). The deleting instance
// fences itself by its own clock: it sends no delete for an intent older than
// half of that (lib/reconcilers/restart.ts), so a paused instance cannot act on
// an intent others no longer count.
import type { PodView } from '../kube/types.js';

/** Written by `restart` only (one writer); assign carries it along untouched. */
export const ANNOTATION_RESTARTING = 'k8slab.info/restarting';

/** Longer than a reconcile may take (the Knative Service's timeoutSeconds, 60 s) with margin. */
export const INTENT_TTL_MS = 120_000;

export interface RestartIntent {
  pod: string;
  uid: string;
  /** RFC 3339, by the writer's clock. */
  at: string;
}

/** Tolerant: an absent or damaged annotation reads as no intent. */
export function readIntents(annotations: Record<string, string>): RestartIntent[] {
  const raw = annotations[ANNOTATION_RESTARTING];
  if (!raw) return [];
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (i): i is RestartIntent => !!i && typeof i === 'object' && typeof i.pod === 'string' && typeof i.uid === 'string' && typeof i.at === 'string' && !Number.isNaN(Date.parse(i.at)),
    );
  } catch {
    return [];
  }
}

/** Intents still in force: not expired, and their pod (that very uid) still live and not yet being deleted. */
export function liveIntents(intents: readonly RestartIntent[], pods: readonly PodView[], now: Date): RestartIntent[] {
  const live = new Map(pods.map((p) => [p.uid, p] as const));
  return intents.filter((i) => {
    const pod = live.get(i.uid);
    return !!pod && !pod.terminating && now.getTime() - Date.parse(i.at) < INTENT_TTL_MS;
  });
}

/** The annotation value recording `deletes` beside the intents still in force. */
export function recordIntents(live: readonly RestartIntent[], deletes: readonly PodView[], now: Date): string {
  const at = now.toISOString();
  const fresh = deletes.map((p) => ({ pod: p.name, uid: p.uid, at }));
  const kept = live.filter((i) => !fresh.some((f) => f.uid === i.uid));
  return JSON.stringify([...kept, ...fresh]);
}

/** Whether an intent recorded at `at` may still be acted on by its writer (half the TTL: the rest is margin). */
export const mayStillDelete = (at: Date, now: Date): boolean => now.getTime() - at.getTime() < INTENT_TTL_MS / 2;
