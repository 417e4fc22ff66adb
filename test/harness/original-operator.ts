// The original operator (github.com/marcosQuesada/k8s-swarm, its
// services/controller in "external" mode: out of cluster, a user's
// kubeconfig) against a local cluster, for bench:coverage's side-by-side run
// (bench/coverage.ts --peer original). Built by test/controlplane
// (originalOperator in build.ts); its CRD and placeholder ConfigMap are the
// manifests its module ships (k8s/crd.yaml, k8s/configmap.yaml).
//
// What the benchmark's setup adapts for it, and why (the reference worker
// itself is unchanged):
// - the worker pool's StatefulSet gets the label `app: swarm-worker`: the
//   original selects StatefulSets and pods by their own `app` label, and the
//   sample carries it on its pod template only;
// - the ConfigMap must exist before it writes one (it gets, then updates): its
//   documented placeholder, whose `workloads:` without `version` the reference
//   worker rejects as invalid, keeping its empty share until the first
//   assignment arrives.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { freePort } from '../controlplane/ports.js';

/** The original's CRD: the same name as Swarm's (group k8slab.info, plural swarms), so only one can be installed at a time. */
export const ORIGINAL_CRD_NAME = 'swarms.k8slab.info';
/** The label value it watches (its `--label`, default "swarm-worker"): StatefulSets and pods whose `app` label has it. */
export const ORIGINAL_WATCHED_LABEL = 'swarm-worker';

type Manifest = { kind: string; metadata: Record<string, unknown> & { labels?: Record<string, string>; name?: string }; spec?: Record<string, unknown> };

/** `yaml` (a manifest stream) with each StatefulSet labelled `app: <label>`, as the original's own k8s/statefulset.yaml is. */
export function withStatefulSetAppLabel(yaml: string, label: string = ORIGINAL_WATCHED_LABEL): string {
  return parseAllDocuments(yaml)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((object): object is Manifest => object !== null)
    .map((object) => {
      if (object.kind === 'StatefulSet') object.metadata = { ...object.metadata, labels: { ...object.metadata.labels, app: label } };
      return stringify(object);
    })
    .join('---\n');
}

/** The document named `name` of kind `kind` in a manifest stream, moved to `namespace`. */
export function manifestIn(yaml: string, kind: string, name: string, namespace: string): string {
  const found = parseAllDocuments(yaml)
    .map((doc) => doc.toJS() as Manifest | null)
    .find((object) => object?.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the manifests`);
  return stringify({ ...found, metadata: { ...found.metadata, namespace } });
}

/** The controller's own config.yml (its k8s/configmap.yaml swarm-controller-config): the jobs, in order (its chunks follow the order). */
export function controllerConfigYaml(jobs: readonly string[]): string {
  return stringify({ jobs: [...jobs], version: 0 });
}

export interface OriginalOperatorOptions {
  /** The built controller (originalOperator().binary). */
  readonly binary: string;
  /** An admin kubeconfig: external mode runs with the user's credentials ($HOME/.kube/config). */
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly jobs: readonly string[];
  /** Its HOME, config and log go here. */
  readonly workDir: string;
  readonly configMapName?: string;
}

export interface RunningOriginalOperator {
  readonly logPath: string;
  stop(): Promise<void>;
}

/** Starts the controller (`external`), its own process group, logging to `<workDir>/original-operator.log`. */
export async function startOriginalOperator(options: OriginalOperatorOptions): Promise<RunningOriginalOperator> {
  const home = join(options.workDir, 'home');
  const configDir = join(options.workDir, 'config');
  await mkdir(join(home, '.kube'), { recursive: true });
  await mkdir(configDir, { recursive: true });
  // External mode reads exactly $HOME/.kube/config.
  await copyFile(options.kubeconfig, join(home, '.kube', 'config'));
  await writeFile(join(configDir, 'config.yml'), controllerConfigYaml(options.jobs));
  const logPath = join(options.workDir, 'original-operator.log');
  const log = createWriteStream(logPath, { flags: 'a' });
  const port = await freePort();
  const args = ['external', '--namespace', options.namespace, '--label', ORIGINAL_WATCHED_LABEL, '--configmap', options.configMapName ?? 'swarm-worker-config'];
  args.push('--config-path', configDir, '--http-port', String(port), '--log-level', 'info');
  // A clean environment: it reads NAMESPACE, WATCHED_LABEL, CONFIG_PATH and HTTP_PORT from it over its flags.
  const child: ChildProcess = spawn(options.binary, args, {
    env: { HOME: home, PATH: process.env.PATH ?? '/usr/bin:/bin' },
    cwd: options.workDir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  // Never outlive the benchmark, however it ends.
  const onExit = () => killGroup('SIGKILL');
  process.once('exit', onExit);
  // Give it a moment to fail on its configuration (it exits at once on a bad config or kubeconfig).
  const early = await Promise.race([exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 1500))]);
  if (early !== 'running') {
    process.removeListener('exit', onExit);
    const tail = (await readFile(logPath, 'utf8').catch(() => '')).slice(-2000);
    throw new Error(`the original operator exited at once (code ${early}):\n${tail}`);
  }
  return {
    logPath,
    stop: async () => {
      process.removeListener('exit', onExit);
      if (child.exitCode === null && child.signalCode === null) {
        killGroup('SIGTERM');
        const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000))]);
        if (!stopped) killGroup('SIGKILL');
      }
      log.end();
    },
  };
}
