/** The baseline recorded before the handoff issue (bench/RESULTS.md; see results-file.ts): kept, no longer written. */
export const COVERAGE_SECTION = 'bench:coverage';
/** bench:coverage's section for this design, both scaling paths. */
export const CURRENT_COVERAGE_SECTION = 'bench:coverage:current';
/** Its side-by-side run against the original operator (`--peer original`), a section of its own so the baseline stays. */
export const ORIGINAL_COVERAGE_SECTION = 'bench:coverage:original';
