// The campaign worker as one file, bundled once per campaign (esbuild; the packages stay
// in node_modules): each campaign process then starts in about half a second of CPU,
// where tsx spends 2–3 s compiling every source file on load. It is written beside the
// packages (node_modules/.cache) so that they resolve, and removed when the campaign ends.
// The bundle runs the same code: nothing under test/sim or lib reads files relative to
// its own module, which a bundle would move.
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export interface Bundle {
  file: string;
  remove(): void;
}

export async function bundle(entry: string): Promise<Bundle> {
  const dir = fileURLToPath(new URL('../../node_modules/.cache/swarm-sim/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const file = `${dir}campaign-worker-${process.pid}.mjs`;
  await build({ entryPoints: [entry], outfile: file, bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning' });
  const remove = () => rmSync(file, { force: true });
  process.on('exit', remove);
  return { file, remove };
}
