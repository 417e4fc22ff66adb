// By hand: real Knative + Traefik + Swarm (+ the sample) on the running `npm run cluster:up` cluster.
//   npx tsx test/harness/real-knative-up.ts [--no-sample] [--trace [--sink http://10.244.0.1:4319]]
// --trace: the collector in-cluster, Knative's config-observability and the
// functions' OTEL_* env pointed at it, its spans forwarded to a trace sink on
// the host (`npx tsx test/harness/trace-sink.ts --port 4319` prints each trace).
import { defaultWorkDir } from '../controlplane/cluster.js';
import { NODE_IP } from '../controlplane/node-config.js';
import { join } from 'node:path';
import { traceFunctions, type Kubectl } from './knative-tracing.js';
import { applySample, deploySwarmOnKnative, installKnative, installKnativeWithTracing, kubectl as kubectlWith } from './real-knative.js';

const kubeconfig = join(defaultWorkDir, 'kubeconfig');
const progress = (line: string) => process.stdout.write(`[knative] ${line}\n`);
const kubectl: Kubectl = (args, stdin) => kubectlWith(kubeconfig, args, stdin);
const flag = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const trace = process.argv.includes('--trace');
const sinkEndpoint = flag('--sink') ?? `http://${NODE_IP}:4319`;
const installed = trace
  ? await installKnativeWithTracing(defaultWorkDir, { kubeconfig, progress, sinkEndpoint })
  : await installKnative(defaultWorkDir, { kubeconfig, progress });
const deployed = await deploySwarmOnKnative(defaultWorkDir, installed, { kubeconfig, progress });
if (trace) {
  await traceFunctions(kubectl);
  progress('the functions export their spans (a new Revision each)');
}
if (!process.argv.includes('--no-sample')) {
  await applySample(kubeconfig, deployed.workerImage);
  progress('applied knative/samples (namespace swarm)');
}
