/** The name of bench:coverage's section in bench/RESULTS.md (see results-file.ts). */
export const COVERAGE_SECTION = 'bench:coverage';
/** Its side-by-side run against the original operator (`--peer original`), a section of its own so the baseline stays. */
export const ORIGINAL_COVERAGE_SECTION = 'bench:coverage:original';
