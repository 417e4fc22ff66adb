// bench:pools's table: per step of the pool script, the Deployment pool's row
// beside the StatefulSet pool's.
import type { StepCost } from '../test/harness/pool-script.js';

export const POOLS_SECTION = 'bench:pools';

/** The Markdown table, steps in the script's order, each step's pools in the order measured. */
export function poolsTable(costs: readonly StepCost[]): string[] {
  const steps = [...new Set(costs.map((c) => c.step))];
  const rows = steps.flatMap((step) => costs.filter((c) => c.step === step));
  return [
    '| step | pool | job starts (moves) | pods replaced | uncovered job-s | duplicate job-s |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
    ...rows.map((c) => `| ${c.step} | ${c.pool} | ${c.moves} | ${c.podsReplaced} | ${c.uncoveredSeconds.toFixed(1)} | ${c.duplicateSeconds.toFixed(1)} |`),
  ];
}
