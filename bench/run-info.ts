// What a benchmark's section says about the run: the tree measured and the machine.
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';

/** The tree measured: its commit, and whether it had uncommitted changes. */
export function measuredTree(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: new URL('..', import.meta.url), encoding: 'utf8' }).trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'an unknown commit';
  }
}

/** The machine, for a benchmark on the local cluster with its real node. */
export const realNodeMachine = (): string =>
  `Machine: ${cpus().length} CPUs (nproc), ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; the local cluster with one real node (containerd, kubelet), shared with other work while it ran.`;
