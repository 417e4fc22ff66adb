import { defineConfig } from 'vitest/config';

// Two tiers: `unit` (pure decisions, no cluster) and `integration` (the real local
// control plane, started once per run by test/controlplane/global-setup.ts).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
    ],
  },
});
