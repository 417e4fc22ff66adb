// `npm test`: every check, side by side, so the warm run fits its ten minutes.
// The integration tier (vitest's `integration` project on the real cluster,
// about eight minutes, mostly waiting on the node) is the long pole; beside it
// run, one after the other, typecheck, lint, the unit tier (CPU for about
// two minutes) and the simulator's fixed campaign (`npm run test:sim`:
// test/sim/fixed-campaign.ts), and the image checks (`npm run test:image`:
// buildah and their own Node), and the manifest checks (`npm run test:manifests`: helm and
// kube-score, built on first use; their build progress shows at once). Run
// in one vitest the unit and integration tiers would be two groups, one
// after the other.
// The integration tier's output streams; the others' is held and printed after
// it, each under its own heading, so nothing interleaves. The exit code is
// non-zero if anything failed, and the summary says what.
import { spawn } from 'node:child_process';

interface Finished {
  readonly name: string;
  readonly code: number;
  readonly output: string;
}

/** Held output's lines that are shown at once too: a tool's first build (minutes) says what it is doing. */
const LIVE = /^\[tools\] .*$/gm;

function run(name: string, command: string, args: readonly string[], hold: boolean): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    let partial = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines.join('\n').match(LIVE) ?? []) process.stderr.write(`${line}\n`);
    });
    child.on('error', (error) => resolve({ name, code: 1, output: `${output}${String(error)}\n` }));
    child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output }));
  });
}

/** Runs `steps` one after the other, each held; stops at the first failure (its output says why). */
async function chain(steps: readonly [string, string, readonly string[]][]): Promise<Finished[]> {
  const done: Finished[] = [];
  for (const [name, command, args] of steps) {
    const finished = await run(name, command, args, true);
    done.push(finished);
    if (finished.code !== 0) break;
  }
  return done;
}

process.stdout.write(
  'npm test: the integration tier (below) beside typecheck → lint → unit tier → the simulator\'s fixed campaign (npm run test:sim), the image checks (npm run test:image) and the manifest checks (npm run test:manifests), whose output follows it\n',
);
let heldDone = false;
const held = Promise.all([
  chain([
    ['npm run typecheck', 'npm', ['run', '--silent', 'typecheck']],
    ['npm run lint', 'npm', ['run', '--silent', 'lint']],
    ['vitest --project unit', 'npx', ['vitest', 'run', '--project', 'unit']],
    ['npm run test:sim', 'npm', ['run', '--silent', 'test:sim']],
  ]),
  run('npm run test:image', 'npm', ['run', '--silent', 'test:image'], true),
  run('npm run test:manifests', 'npm', ['run', '--silent', 'test:manifests'], true),
]).then(([checks, image, manifests]) => [...checks, image, manifests]).finally(() => (heldDone = true));
const integration = await run('vitest --project integration', 'npx', ['vitest', 'run', '--project', 'integration'], false);
if (!heldDone) process.stdout.write('\nwaiting for typecheck, lint, the unit tier, the image and manifest checks …\n');
const others = await held;
for (const finished of others) process.stdout.write(`\n── ${finished.name} ──\n${finished.output}`);
const all = [integration, ...others];
const failed = all.filter((f) => f.code !== 0).map((f) => f.name);
process.stdout.write(`\nnpm test: ${failed.length === 0 ? `all passed (${all.map((f) => f.name).join(', ')})` : `FAILED: ${failed.join(', ')}`}\n`);
process.exit(failed.length === 0 ? 0 : 1);
