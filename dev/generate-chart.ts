// npm run generate:chart: writes charts/swarm from knative/ and lib/api
// (dev/chart/generate.ts). `--check` exits 1 when the checked-in chart is
// stale (the unit tier checks the same).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CHART_DIR, chartFiles } from './chart/generate.js';

const repo = resolve(import.meta.dirname, '..');
export const readRepo = (path: string): string | undefined => {
  const full = join(repo, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined;
};

const files = chartFiles(readRepo);
if (process.argv.includes('--check')) {
  const stale = Object.entries(files).filter(([path, text]) => readRepo(join(CHART_DIR, path)) !== text).map(([path]) => path);
  if (stale.length) {
    process.stderr.write(`${CHART_DIR} is stale (${stale.join(', ')}): run npm run generate:chart\n`);
    process.exit(1);
  }
} else {
  for (const [path, text] of Object.entries(files)) {
    const full = join(repo, CHART_DIR, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, text);
  }
  process.stdout.write(`wrote ${Object.keys(files).length} files to ${CHART_DIR}\n`);
}
