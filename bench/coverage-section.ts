/** The name of bench:coverage's section in bench/RESULTS.md (see results-file.ts). */
export const COVERAGE_SECTION = 'bench:coverage';
