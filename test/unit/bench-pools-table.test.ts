import { describe, expect, it } from 'vitest';
import { poolsTable } from '../../bench/pools-table.js';
import type { StepCost } from '../../test/harness/pool-script.js';

const cost = (pool: StepCost['pool'], step: string, moves: number): StepCost => ({ pool, step, moves, podsReplaced: 0, uncoveredSeconds: 0, duplicateSeconds: 1.5 });

describe('bench:pools: the table', () => {
  it('puts each step\'s pools side by side, steps in the script\'s order', () => {
    const table = poolsTable([cost('Deployment', 'scale 3 → 5', 10), cost('Deployment', 'a pod deleted', 14), cost('StatefulSet', 'scale 3 → 5', 9), cost('StatefulSet', 'a pod deleted', 13)]);
    expect(table.slice(2)).toEqual([
      '| scale 3 → 5 | Deployment | 10 | 0 | 0.0 | 1.5 |',
      '| scale 3 → 5 | StatefulSet | 9 | 0 | 0.0 | 1.5 |',
      '| a pod deleted | Deployment | 14 | 0 | 0.0 | 1.5 |',
      '| a pod deleted | StatefulSet | 13 | 0 | 0.0 | 1.5 |',
    ]);
  });
});
