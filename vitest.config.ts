import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The *-e2e files are served by Swarm on real Knative, which the global setup
// installs in the background on a fresh cluster: they run after the files that
// need none (whose minutes overlap that install), knative-e2e last of all (on a
// fresh cluster it leaves Swarm and Knative installed for the cluster's own
// teardown: undoing them costs a minute).
class KnativeLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => (f.moduleId.includes('knative-e2e') ? 2 : f.moduleId.endsWith('-e2e.test.ts') ? 1 : 0);
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}

// Two tiers: `unit` (pure decisions and adapters over stubs, no cluster) and
// `integration` (the real local control plane, started once per run by
// test/controlplane/global-setup.ts; one namespace per test).
export default defineConfig({
  test: {
    sequence: { sequencer: KnativeLast },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // A hang, not a speed limit: property tests and child processes run ten times slower on a loaded
          // machine (load 20 on 2 cores failed four at vitest's 5 s), and no test asserts a duration.
          testTimeout: 60 * 1000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/controlplane/global-setup.ts'],
          // The first run builds the control plane from Go modules (progress is printed).
          hookTimeout: 60 * 60 * 1000,
          testTimeout: 180 * 1000,
          fileParallelism: false,
        },
      },
    ],
  },
});
