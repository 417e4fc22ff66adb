import { describe, expect, it } from 'vitest';
import { allSections, sectionOf, withSection } from '../../bench/results-file.js';

describe('bench/RESULTS.md sections', () => {
  it('appends a section once, then replaces only it', () => {
    const first = withSection('# Assignment\n\nnumbers\n', 'bench:coverage', 'baseline 1');
    expect(first).toBe('# Assignment\n\nnumbers\n\n<!-- bench:coverage:begin -->\nbaseline 1\n<!-- bench:coverage:end -->\n');
    const second = withSection(first, 'bench:coverage', 'baseline $& 2\n');
    expect(second).toBe(first.replace('baseline 1', () => 'baseline $& 2'));
    expect(sectionOf(second, 'bench:coverage')).toBe('<!-- bench:coverage:begin -->\nbaseline $& 2\n<!-- bench:coverage:end -->');
    expect(sectionOf('# nothing', 'bench:coverage')).toBeUndefined();
  });

  it('lists every section, so a benchmark that rewrites the file keeps the others', () => {
    let text = withSection('# Assignment\n', 'bench:coverage', 'baseline');
    text = withSection(text, 'bench:coverage:original', 'side by side');
    text = withSection(text, 'bench:reconcile', 'cost');
    expect(allSections(text)).toEqual([
      '<!-- bench:coverage:begin -->\nbaseline\n<!-- bench:coverage:end -->',
      '<!-- bench:coverage:original:begin -->\nside by side\n<!-- bench:coverage:original:end -->',
      '<!-- bench:reconcile:begin -->\ncost\n<!-- bench:reconcile:end -->',
    ]);
    expect(sectionOf(text, 'bench:coverage')).toBe('<!-- bench:coverage:begin -->\nbaseline\n<!-- bench:coverage:end -->');
    expect(allSections('# nothing')).toEqual([]);
  });
});
