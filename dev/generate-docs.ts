// Writes docs/reference.md from lib/api/schema.ts (npm run generate:docs).
// `--check` exits 1 when the committed page differs, as generate:crd does.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderApiReference } from './api-reference.js';

export const REFERENCE_PATH = fileURLToPath(new URL('../docs/reference.md', import.meta.url));

async function main(argv: string[]): Promise<number> {
  const text = renderApiReference();
  if (argv.includes('--check')) {
    const committed = await readFile(REFERENCE_PATH, 'utf8').catch(() => '');
    if (committed === text) return 0;
    process.stderr.write(`${REFERENCE_PATH} is stale: run npm run generate:docs\n`);
    return 1;
  }
  await writeFile(REFERENCE_PATH, text);
  process.stdout.write(`wrote ${REFERENCE_PATH}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`generate-docs: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
