// The Go and Python reference workers (examples/worker-go on sdk/go,
// examples/worker-python on sdk/python) as real pods on the real node, each
// pool a StatefulSet of acknowledging workers with its own Swarm, in its own
// namespace, side by side, on the Swarm install the other e2e files share
// (test/harness/end-to-end.ts). Images: the Dockerfile's worker-go and
// worker-python targets (test/image, cached by their inputs), imported into
// the node. Each Swarm converges (Running, every worker acknowledging its
// share, every job run exactly once by the workers' own reports), then
// `kubectl scale swm` 3 → 5 → 2 hands jobs to the new pods and back from the
// departing ones (which drain: DRAIN_CONFIGMAP), and a pod deleted by hand
// hands its share to its replacement (the handover annotation), each with
// zero uncovered job-seconds, counted by the coverage recorder from what each
// example application logs in its own start and stop callbacks. Each Swarm
// sets spec.failover (the sample's 15 s lease): after every step each worker,
// the replacement of the deleted pod too, heartbeats and announces protocol 2,
// and the pool's readiness probe is the window W30 asks for.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { importImages } from '../controlplane/cluster.js';
import { startEndToEnd, type EndToEnd } from '../harness/end-to-end.js';
import { heartbeating, probeWindow } from '../harness/heartbeats.js';
import { poolRun, SCRIPT, START_REPLICAS, STEP_TIMEOUT, victimOf, type PoolRun, type StepOutcome } from '../harness/pool-script.js';
import { kubectl } from '../harness/swarm-install.js';
import { sampleSwarmYaml, workerPoolYaml } from '../harness/worker-pool.js';
import { ensureTargets } from '../image/build.js';
import { seedStreams } from '../support/fixtures.js';

const kubeconfig = inject('kubeconfig');
const LANGUAGES = ['go', 'python'] as const;
type Language = (typeof LANGUAGES)[number];
const TARGET = { go: 'worker-go', python: 'worker-python' } as const;
const progress = (line: string) => process.stderr.write(`[polyglot] ${line}\n`);
/** spec.failover.leaseSeconds: the sample's (knative/samples/swarm.yaml), which its pool's readiness probe is sized for. */
const LEASE_SECONDS = 15;

const worlds = {} as Record<Language, EndToEnd>;
const runs = {} as Record<Language, PoolRun>;
const images = {} as Record<Language, string>;

/**
 * The sample pool (knative/samples/statefulset.yaml) running `image`, its
 * probes as they are: these examples serve /healthz (the SDK's health) and
 * /readyz (its readiness), as the TypeScript worker does.
 */
const poolYaml = (namespace: string, image: string): string => workerPoolYaml(namespace, START_REPLICAS, image);

/** Both pools through the same step at once. */
const both = async (step: (language: Language) => Promise<StepOutcome>) => {
  const outcomes = await Promise.all(LANGUAGES.map(step));
  return Object.fromEntries(LANGUAGES.map((language, i) => [language, outcomes[i]!])) as Record<Language, StepOutcome>;
};

const handedOver = (s: StepOutcome) => ({ gaps: s.report.gaps, uncovered: s.report.totals.uncoveredSeconds, spread: s.spread <= 1 });

/** What is wrong with each live worker's heartbeat, per language (every pod: ''). */
const heartbeats = async () => {
  const problems = await Promise.all(LANGUAGES.map((language) => heartbeating(kubeconfig, runs[language].namespace, LEASE_SECONDS)));
  return Object.fromEntries(LANGUAGES.map((language, i) => [language, problems[i]!])) as Record<Language, Record<string, string>>;
};
const allWell = (pods: string[]) => Object.fromEntries(pods.map((pod) => [pod, '']));

beforeAll(async () => {
  const built = await ensureTargets([TARGET.go, TARGET.python], progress);
  const archives = LANGUAGES.map((language) => ({ name: built[TARGET[language]].name, path: built[TARGET[language]].archive }));
  await importImages(archives, inject('clusterWorkDir'), progress);
  for (const language of LANGUAGES) images[language] = built[TARGET[language]].name;
  // One after the other: each namespace served rolls the ApiServerSource adapter out anew.
  for (const language of LANGUAGES) {
    const namespace = `polyglot-${language}-${process.pid}`;
    worlds[language] = await startEndToEnd({ kubeconfig, namespace, realNode: inject('realNode'), resyncEveryMs: 10_000 });
    runs[language] = poolRun(worlds[language], kubeconfig, namespace, 'StatefulSet');
  }
}, STEP_TIMEOUT);

afterAll(async () => {
  await Promise.all(LANGUAGES.map((language) => worlds[language]?.stop()));
});

describe('Go and Python worker pools on the real node', () => {
  it('each Swarm (spec.failover) converges: Running, every worker acknowledging and heartbeating, the 27 streams run exactly once over 3 pods', async () => {
    const started = await both((language) =>
      runs[language].step({
        name: 'start',
        replicas: START_REPLICAS,
        async change(run) {
          await kubectl(kubeconfig, ['apply', '-f', '-'], poolYaml(run.namespace, images[language]));
          await kubectl(kubeconfig, ['apply', '-f', '-'], sampleSwarmYaml(run.namespace, seedStreams, { policy: 'None', replicas: START_REPLICAS, leaseSeconds: LEASE_SECONDS }));
        },
      }),
    );
    const shares = (s: StepOutcome) => Object.values(s.after).map((jobs) => jobs.length).sort();
    expect({ go: shares(started.go), python: shares(started.python) }).toEqual({ go: [9, 9, 9], python: [9, 9, 9] });
    const pods = allWell(['swarm-worker-0', 'swarm-worker-1', 'swarm-worker-2']);
    expect(await heartbeats()).toEqual({ go: pods, python: pods });
    for (const language of LANGUAGES) {
      const { window, least } = await probeWindow(kubeconfig, runs[language].namespace, 'swarm-worker', LEASE_SECONDS);
      expect({ language, probeWindowAtLeastW30: (window ?? 0) >= least }).toEqual({ language, probeWindowAtLeastW30: true });
    }
  }, STEP_TIMEOUT);

  it('kubectl scale swm 3 → 5: the new pods take their shares before the others drop them: zero uncovered job-seconds', async () => {
    const s = await both((language) => runs[language].step(SCRIPT.scaleUp));
    expect({ go: handedOver(s.go), python: handedOver(s.python) }).toEqual({
      go: { gaps: [], uncovered: 0, spread: true },
      python: { gaps: [], uncovered: 0, spread: true },
    });
    const pods = allWell([0, 1, 2, 3, 4].map((i) => `swarm-worker-${i}`));
    expect(await heartbeats()).toEqual({ go: pods, python: pods });
  }, STEP_TIMEOUT);

  it('kubectl scale swm 5 → 2: the departing pods run their jobs until the survivors acknowledge them: zero uncovered job-seconds', async () => {
    const s = await both((language) => runs[language].step(SCRIPT.scaleDown));
    expect({ go: handedOver(s.go), python: handedOver(s.python) }).toEqual({
      go: { gaps: [], uncovered: 0, spread: true },
      python: { gaps: [], uncovered: 0, spread: true },
    });
    const pods = allWell(['swarm-worker-0', 'swarm-worker-1']);
    expect(await heartbeats()).toEqual({ go: pods, python: pods });
  }, STEP_TIMEOUT);

  it('a pod deleted by hand: its peers take its jobs before it stops, its replacement takes a share back: zero uncovered job-seconds', async () => {
    const s = await both((language) => runs[language].step(SCRIPT.podDeleted));
    // A StatefulSet's replacement has the victim's name (and a new uid).
    const replaced = (o: StepOutcome) => ({ ...handedOver(o), replaced: o.cost.podsReplaced, back: (o.after[victimOf(o.before)]?.length ?? 0) > 0 });
    expect({ go: replaced(s.go), python: replaced(s.python) }).toEqual({
      go: { gaps: [], uncovered: 0, spread: true, replaced: 1, back: true },
      python: { gaps: [], uncovered: 0, spread: true, replaced: 1, back: true },
    });
    // The replacement heartbeats under its new uid.
    const pods = allWell(['swarm-worker-0', 'swarm-worker-1']);
    expect(await heartbeats()).toEqual({ go: pods, python: pods });
  }, STEP_TIMEOUT);

  it('status was never Ready while a job had no acknowledged owner', () => {
    for (const language of LANGUAGES) {
      const readyUncovered = runs[language].statuses.filter((st) => st?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && (st.uncoveredJobs ?? 0) > 0);
      expect(runs[language].statuses.length).toBeGreaterThan(3);
      expect({ language, readyUncovered }).toEqual({ language, readyUncovered: [] });
    }
  });
});
