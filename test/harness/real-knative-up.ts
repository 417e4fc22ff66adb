// By hand: real Knative + Traefik + Swarm (+ the sample) on the running `npm run cluster:up` cluster.
//   npx tsx test/harness/real-knative-up.ts [--no-sample]
import { defaultWorkDir } from '../controlplane/cluster.js';
import { join } from 'node:path';
import { applySample, deploySwarmOnKnative, installKnative } from './real-knative.js';

const kubeconfig = join(defaultWorkDir, 'kubeconfig');
const progress = (line: string) => process.stdout.write(`[knative] ${line}\n`);
const installed = await installKnative(defaultWorkDir, { kubeconfig, progress });
const deployed = await deploySwarmOnKnative(defaultWorkDir, installed, { kubeconfig, progress });
if (!process.argv.includes('--no-sample')) {
  await applySample(kubeconfig, deployed.workerImage);
  progress('applied knative/samples (namespace swarm)');
}
