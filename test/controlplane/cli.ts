// `npm run cluster:up | cluster:down | cluster:status`: the long-lived local
// cluster under .swarm/. `up` starts detached processes and returns.
import { join, relative } from 'node:path';
import { originalOperator } from './build.js';
import { binPath, clusterStatus, defaultWorkDir, linkBinaries, repoRoot, startCluster, stopCluster } from './cluster.js';
import { diffSnapshots, takeSnapshot } from './host-state.js';
import { ALL_PARTS, buildKnativeImages, type KnativeImagesPart } from './knative-images.js';
import { NODE_LOCK_DIR, cleanupNode, nodeHeldBy, nodeLeftovers } from './node.js';


async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case 'build':
      process.stdout.write(`binaries in ${await linkBinaries()}\n`);
      return 0;
    case 'build-original': {
      // The original operator (bench:coverage --peer original); see ORIGINAL_GIT_DIR_ENV in build.ts.
      const { binary, moduleDir } = await originalOperator();
      process.stdout.write(`${binary}\nits module tree: ${moduleDir}\n`);
      return 0;
    }
    case 'knative-images': {
      // Knative Serving/Eventing images and release YAMLs, Traefik, otelcol (knative-images.ts); optional parts as arguments.
      const asked = process.argv.slice(3);
      const unknown = asked.filter((p) => !(ALL_PARTS as readonly string[]).includes(p));
      if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(', ')}: choose from ${ALL_PARTS.join(', ')}`);
      const started = Date.now();
      const built = await buildKnativeImages(undefined, asked.length > 0 ? (asked as KnativeImagesPart[]) : ALL_PARTS);
      const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
      process.stdout.write(`images (${built.archives.length}):\n`);
      for (const a of built.archives) process.stdout.write(`  ${a.name.padEnd(58)} ${mib(a.bytes).padStart(10)}  ${a.path}\n`);
      process.stdout.write(`manifests:\n`);
      for (const [file, path] of Object.entries(built.manifests)) process.stdout.write(`  ${file.padEnd(24)} ${path}\n`);
      process.stdout.write(`cache: ${built.cacheDirs.join('\n       ')}\n(${Math.round((Date.now() - started) / 1000)} s)\n`);
      return 0;
    }
    case 'node-cleanup': {
      // The watchdog's last step: the real node of a cluster whose owner died.
      const workDir = process.argv[3] ?? defaultWorkDir;
      if (!nodeHeldBy(workDir)) {
        process.stdout.write(`the real node (${NODE_LOCK_DIR}) is not held by ${workDir}: nothing to clean\n`);
        return 0;
      }
      await cleanupNode((line) => process.stdout.write(`${line}\n`));
      process.stdout.write(`cleaned up the real node of ${workDir}\n`);
      return 0;
    }
    case 'cleanup-check': {
      // By hand: a throwaway cluster with a real node, then a before/after diff of the machine.
      let before = takeSnapshot();
      const cluster = await startCluster({
        workDir: join(defaultWorkDir, `cleanup-check-${process.pid}`),
        ephemeral: true,
        ownerPid: process.pid,
        onNodeLocked: () => (before = takeSnapshot()),
      });
      await cluster.stop();
      const left = [...diffSnapshots(before, takeSnapshot()), ...(await nodeLeftovers())];
      process.stdout.write(left.length ? `left behind:\n${left.join('\n')}\n` : 'the machine is as it was before the cluster started\n');
      return left.length ? 1 : 0;
    }
    case 'up': {
      // Ctrl-C while starting: stop what was started (the state file is written as it goes).
      process.once('SIGINT', () => {
        void stopCluster(defaultWorkDir).finally(() => process.exit(130));
      });
      // `--sync-frequency 5s`: the kubelet's pod resync (and so ConfigMap volume refresh), as the integration tier's cluster has.
      const at = process.argv.indexOf('--sync-frequency');
      const syncFrequency = at > 0 ? process.argv[at + 1] : undefined;
      const cluster = await startCluster({ workDir: defaultWorkDir, ...(syncFrequency ? { syncFrequency } : {}) });
      const linkDir = relative(repoRoot, await linkBinaries());
      process.stdout.write(
        `cluster up: ${cluster.server}\n` +
          `  export KUBECONFIG=${cluster.kubeconfigPath} PATH=$PWD/${linkDir}:$PATH\n` +
          `  kubectl get nodes     # ${binPath('kubectl')}\n` +
          `logs: ${relative(repoRoot, defaultWorkDir)}/logs/  stop: npm run cluster:down\n`,
      );
      return 0;
    }
    case 'down': {
      const stopped = await stopCluster(defaultWorkDir);
      process.stdout.write(stopped.length > 0 ? `stopped ${stopped.join(', ')}\n` : 'no cluster running\n');
      return 0;
    }
    case 'status': {
      const status = await clusterStatus(defaultWorkDir);
      if (!status) {
        process.stdout.write('no cluster (npm run cluster:up)\n');
        return 1;
      }
      process.stdout.write(`server ${status.state.server}  kubeconfig ${status.state.kubeconfigPath}\n`);
      for (const c of status.components) {
        const health = c.healthy ? 'healthy' : c.running ? 'UNHEALTHY' : 'NOT RUNNING';
        process.stdout.write(`  ${c.name.padEnd(24)} pid ${String(c.pid).padEnd(8)} ${health}\n`);
      }
      return status.components.every((c) => c.healthy) ? 0 : 1;
    }
    default:
      process.stderr.write('usage: tsx test/controlplane/cli.ts build|build-original|knative-images [serving|eventing|traefik|otelcol…]|up|down|status|cleanup-check|node-cleanup [workDir]\n');
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
