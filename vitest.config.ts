import { defineConfig } from 'vitest/config';

// Two tiers: `unit` (pure decisions and adapters over stubs, no cluster) and
// `integration` (the real local control plane, started once per run by
// test/controlplane/global-setup.ts; one namespace per test).
export default defineConfig({
  test: {
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
