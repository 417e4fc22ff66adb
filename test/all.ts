// `npm test`, after typecheck and lint: vitest (the unit and integration
// tiers) and the image checks (`npm run test:image`) side by side. The image
// checks need no cluster and spend their time in buildah and their own Node,
// while the integration tier mostly waits on the real node: run together they
// take about a minute less than one after the other (the warm budget is ten).
// The image checks' output is held and printed after vitest's so the two never
// interleave; the exit code is non-zero if either failed.
import { spawn } from 'node:child_process';

interface Finished {
  readonly code: number;
  readonly output: string;
}

function run(command: string, args: readonly string[], hold: boolean): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => resolve({ code: 1, output: `${output}${String(error)}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

process.stdout.write('npm test: vitest (unit + integration) and the image checks (npm run test:image) side by side; the image checks report after vitest\n');
let imageDone = false;
const image = run('npm', ['run', '--silent', 'test:image'], true).finally(() => (imageDone = true));
const tests = await run('npx', ['vitest', 'run'], false);
if (!imageDone) process.stdout.write('\nwaiting for the image checks (npm run test:image) …\n');
const images = await image;
process.stdout.write(`\n── npm run test:image ──\n${images.output}`);
process.exit(tests.code !== 0 ? tests.code : images.code);
