import { describe, expect, it } from 'vitest';
import { sectionOf, withSection } from '../../bench/results-file.js';

describe('bench/RESULTS.md sections', () => {
  it('appends a section once, then replaces only it', () => {
    const first = withSection('# Assignment\n\nnumbers\n', 'bench:coverage', 'baseline 1');
    expect(first).toBe('# Assignment\n\nnumbers\n\n<!-- bench:coverage:begin -->\nbaseline 1\n<!-- bench:coverage:end -->\n');
    const second = withSection(first, 'bench:coverage', 'baseline $& 2\n');
    expect(second).toBe(first.replace('baseline 1', () => 'baseline $& 2'));
    expect(sectionOf(second, 'bench:coverage')).toBe('<!-- bench:coverage:begin -->\nbaseline $& 2\n<!-- bench:coverage:end -->');
    expect(sectionOf('# nothing', 'bench:coverage')).toBeUndefined();
  });
});
