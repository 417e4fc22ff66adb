// The dead letters about one namespace: the dead-letter Service (Knative's
// event_display, kept at one pod by the test deploy) logs every event that
// exhausted its retries, from every file sharing the cluster; a file asks
// only about its own namespace, so another file's trouble is not its failure.
import { kubectl } from './local-knative.js';
import { SYSTEM_NAMESPACE } from './real-knative.js';

/**
 * The ids of the dead-lettered events about `namespace`: an ApiServerSource
 * event's `namespace` extension, or a resync ping's data naming it.
 */
export async function deadLettersAbout(kubeconfig: string, namespace: string): Promise<string[]> {
  const logs = await kubectl(kubeconfig, ['logs', '-n', SYSTEM_NAMESPACE, '-l', 'serving.knative.dev/service=swarm-dead-letter', '-c', 'event-display', '--tail=-1', '--prefix=false']).catch(() => '');
  // One block per event, from its "Context Attributes," line on (its Extensions and Data follow).
  return logs
    .split(/^Context Attributes,$/m)
    .slice(1)
    .filter((block) => [...block.matchAll(/^\s+namespace: (.+)$/gm), ...block.matchAll(/"namespace":\s*"([^"]*)"/g)].some((m) => m[1]!.trim() === namespace))
    .map((block) => /^\s+id: (.+)$/m.exec(block)?.[1]?.trim() ?? '?');
}
