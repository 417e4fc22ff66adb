// Writes knative/base/swarm-crd.yaml from lib/api/schema.ts (npm run generate:crd).
// `--check` exits 1 when the committed file differs, for CI.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderSwarmCrd } from '../lib/api/crd.js';

export const CRD_PATH = fileURLToPath(new URL('../knative/base/swarm-crd.yaml', import.meta.url));

async function main(argv: string[]): Promise<number> {
  const text = renderSwarmCrd();
  if (argv.includes('--check')) {
    const committed = await readFile(CRD_PATH, 'utf8').catch(() => '');
    if (committed === text) return 0;
    process.stderr.write(`${CRD_PATH} is stale: run npm run generate:crd\n`);
    return 1;
  }
  await writeFile(CRD_PATH, text);
  process.stdout.write(`wrote ${CRD_PATH}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`generate-crd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
