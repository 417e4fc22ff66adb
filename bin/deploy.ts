// `npm run install:crd | uninstall:crd | deploy | undeploy`: the kubebuilder
// make targets, over kubectl and kustomize. Renders knative/, then runs the
// steps planned by bin/deploy-plan.ts against whatever cluster kubectl's
// kubeconfig (or --kubeconfig/--context) points at.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { overrideImages, parseArgs, planSteps, splitDocuments, UsageError, WEBHOOK_RETRY, webhookUnavailable, type DeployOptions } from './deploy-plan.js';

const repo = resolve(import.meta.dirname, '..');

/** Runs kubectl; a step an admission webhook did not answer is tried again (every step is idempotent). */
function kubectl(options: DeployOptions, args: readonly string[], stdin?: string): string {
  const what = `kubectl ${args.filter((a) => a !== '-f' && a !== '-').join(' ')}`;
  for (let attempt = 1; ; attempt++) {
    const result = spawnSync(options.kubectl, args, { cwd: repo, input: stdin, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (result.error) throw new Error(`cannot run ${options.kubectl}: ${result.error.message}`);
    if (result.status === 0) return result.stdout;
    const stderr = result.stderr.trim();
    if (!webhookUnavailable(stderr) || attempt >= WEBHOOK_RETRY.attempts) throw new Error(`${what} failed:\n${stderr}`);
    process.stdout.write(`  an admission webhook did not answer (try ${attempt}/${WEBHOOK_RETRY.attempts}); again in ${WEBHOOK_RETRY.delayMs / 1000} s: ${stderr.split('\n').at(-1)}\n`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, WEBHOOK_RETRY.delayMs);
  }
}

function render(options: DeployOptions, dir: string): ReturnType<typeof splitDocuments> {
  return splitDocuments(kubectl(options, ['kustomize', join(repo, dir)]));
}

export function run(argv: readonly string[]): number {
  const { command, options } = parseArgs(argv, process.env);
  const crd = splitDocuments(readFileSync(join(repo, 'knative', 'base', 'swarm-crd.yaml'), 'utf8'));
  const needsTree = command === 'deploy' || command === 'undeploy';
  const installation = needsTree ? overrideImages(render(options, options.overlay), { functions: options.image, worker: options.workerImage }) : [];
  const bindings = needsTree && options.watchNamespaces.length > 0 ? render(options, 'knative/namespace-access') : [];
  for (const step of planSteps(command, options, { installation, crd, bindings })) {
    process.stdout.write(`swarm: ${step.say}\n`);
    const out = kubectl(options, step.args, step.stdin).trim();
    if (out) process.stdout.write(out.replace(/^/gm, '  ') + '\n');
  }
  return 0;
}

try {
  process.exit(run(process.argv.slice(2)));
} catch (error) {
  process.stderr.write(`swarm: ${(error as Error).message}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
}
