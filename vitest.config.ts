import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// knative-e2e runs last: on a fresh cluster it leaves Swarm and Knative installed for the
// cluster's own teardown (undoing them costs a minute), and an installed Swarm would also
// reconcile the Swarms of the e2e files after it (its ApiServerSource watches every enabled namespace).
class KnativeLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const last = (f: TestSpecification) => (f.moduleId.includes('knative-e2e') ? 1 : 0);
    return [...(await super.sort(files))].sort((a, b) => last(a) - last(b));
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
