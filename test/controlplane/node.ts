// The real node's host side: the machine-wide lock, the bridge and route it
// needs before the API server starts, its configuration files, image import,
// and the teardown that puts the machine back as it was (processes, mounts,
// interfaces, iptables chains, cgroups, sysctls). The node is a machine-wide
// resource (cni0, port 10250, iptables): one per machine, whichever clone.
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync, rmSync, rmdirSync, statSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { binPath, isAlive } from './build.js';
import type { ImageArchive } from './images.js';
import type { NodeLayout } from './node-config.js';
import {
  BRIDGE,
  HOST_PATHS,
  NODE_IP,
  NODE_SYSCTLS,
  POD_CIDR,
  cniConfig,
  isNodeChain,
  nodeLayout,
  nodeResolvConf,
  sysctlPath,
  withoutNodeRules,
} from './node-config.js';
import { SERVICE_CLUSTER_IP_RANGE } from './components.js';

const run = promisify(execFile);
type Progress = (line: string) => void;

/** Where the machine-wide lock lives; it also keeps the host state to restore. */
export const NODE_LOCK_DIR = '/run/swarm-node.lock';

interface LockRecord {
  /** The cluster work directory that holds the node. */
  readonly workDir: string;
  /** The process that took the lock (alive while it starts the node). */
  readonly ownerPid: number;
  /** The node's processes (alive while the node runs). */
  readonly pids: readonly number[];
}

/** A lock directory and what cleans up after its dead holders (releasing it); tests bring their own pair. */
export interface NodeLock {
  readonly dir: string;
  readonly cleanup: (onProgress: Progress) => Promise<void>;
}

/**
 * How long a lock directory without a readable owner may exist before it
 * counts as dead: the current protocol never publishes one, so it was left by
 * an older protocol's acquire (mkdir, then the owner) or a crash mid-release.
 */
const OWNERLESS_GRACE_MS = 10_000;
/** After this long, a takeover mutex was left by a taker that died. */
const STALE_TAKEOVER_MS = 30_000;
const POLL_MS = 2000;

const lockFile = (dir: string): string => `${dir}/owner.json`;
const takeoverDir = (dir: string): string => `${dir}/takeover`;
const sysctlFile = (): string => `${NODE_LOCK_DIR}/sysctls.json`;
const hostPathsFile = (): string => `${NODE_LOCK_DIR}/host-paths.json`;
/** A name no other process or call uses, for files and directories renamed into place. */
const uniqueSuffix = (): string => `${process.pid}-${randomBytes(6).toString('hex')}`;

function readLock(dir: string): LockRecord | undefined {
  try {
    return JSON.parse(readFileSync(lockFile(dir), 'utf8')) as LockRecord;
  } catch {
    return undefined;
  }
}

function sameRecord(a: LockRecord | undefined, b: LockRecord | undefined): boolean {
  if (!a || !b) return a === b;
  return a.workDir === b.workDir && a.ownerPid === b.ownerPid && a.pids.length === b.pids.length && a.pids.every((pid, i) => pid === b.pids[i]);
}

/** Milliseconds since `path` last changed, or undefined when it is gone. */
function ageMs(path: string): number | undefined {
  const stats = safe(() => statSync(path));
  return stats && Date.now() - stats.mtimeMs;
}

const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** Whether the real node is recorded as held by the cluster in `workDir`. */
export function nodeHeldBy(workDir: string): boolean {
  return readLock(NODE_LOCK_DIR)?.workDir === workDir;
}

/**
 * Takes the machine-wide real-node lock for the cluster in `workDir`. Waits
 * (with a progress line) while another live cluster holds it, and fails
 * after `timeoutMs`. A lock whose holders are all dead is taken over, after
 * cleaning up what they left.
 */
export async function acquireNodeLock(
  workDir: string,
  onProgress: Progress,
  timeoutMs: number,
  signal?: AbortSignal,
  lock: NodeLock = { dir: NODE_LOCK_DIR, cleanup: cleanupNode },
): Promise<void> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  const mine: LockRecord = { workDir, ownerPid: process.pid, pids: [] };
  let announced = false;
  for (;;) {
    if (signal?.aborted) throw new Error('stopped while waiting for the real node');
    if (await publishLock(lock.dir, mine)) {
      if (announced) onProgress(`got the real node after waiting ${Math.round((Date.now() - started) / 1000)}s`);
      return;
    }
    const holder = readLock(lock.dir);
    const age = ageMs(lock.dir);
    // Released since the publish failed: try again at once.
    if (age === undefined) continue;
    const dead = holder ? ![holder.ownerPid, ...holder.pids].some((pid) => isAlive(pid) && !isZombie(pid)) : age > OWNERLESS_GRACE_MS;
    if (dead) {
      const outcome = await takeOver(lock.dir, holder, mine);
      if (outcome === 'taken') {
        onProgress(`the real node of ${holder?.workDir ?? 'an unknown cluster'} was left behind by dead processes: cleaning it up`);
        await lock.cleanup(onProgress);
      }
      // Busy: another process is taking over; it then holds the lock, so wait as for a live holder.
      if (outcome !== 'busy') continue;
    }
    const held = holder ? `held by the cluster in ${holder.workDir} (pid ${holder.ownerPid})` : `being taken (${lock.dir} has no owner yet)`;
    if (Date.now() > deadline) {
      throw new Error(
        `the real node (cni0, port ${10250}, iptables) is ${held}; ` +
          'stop it (`npm run cluster:down` there), or start without a real node (SWARM_REAL_NODE=0)',
      );
    }
    if (!announced) {
      onProgress(`waiting for the real node ${held} (one per machine; timeout ${Math.round(timeoutMs / 1000)}s)`);
      announced = true;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Publishes the lock with its owner in one step: built aside, then renamed
 * into place, which fails while a lock is there. A lock is never seen
 * without its owner, so an acquire in progress is never mistaken for a dead one.
 */
async function publishLock(dir: string, record: LockRecord): Promise<boolean> {
  // The rename would replace an empty directory: an older version's acquire
  // between its mkdir and its owner (the check narrows that to its own instant).
  if (existsSync(dir)) return false;
  const staging = `${dir}.${uniqueSuffix()}`;
  try {
    await mkdir(staging);
    await writeFile(lockFile(staging), JSON.stringify(record));
    await rename(staging, dir);
    return true;
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (errorCode(error) === 'ENOTEMPTY' || errorCode(error) === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Makes `record` the owner of the lock judged dead, whose owner was `judged`,
 * unless another process got there first: takers serialize on a mutex inside
 * the lock and compare the owner again under it, so a dead node is cleaned up
 * once, never after it was taken anew. Taken: the caller holds the lock and
 * cleans up; changed: look again; busy: another process is taking over.
 */
async function takeOver(dir: string, judged: LockRecord | undefined, record: LockRecord): Promise<'taken' | 'changed' | 'busy'> {
  const mutex = takeoverDir(dir);
  try {
    await mkdir(mutex);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 'changed';
    if (errorCode(error) !== 'EEXIST') throw error;
    const age = ageMs(mutex);
    if (age === undefined) return 'changed';
    if (age <= STALE_TAKEOVER_MS) return 'busy';
    // Its taker died holding it.
    await rm(mutex, { recursive: true, force: true });
    return 'changed';
  }
  try {
    if (!sameRecord(readLock(dir), judged)) return 'changed';
    // Written inside the mutex: should the lock have been released and
    // published anew meanwhile, the rename finds no file rather than
    // overwriting the new owner.
    const written = `${mutex}/owner.json`;
    await writeFile(written, JSON.stringify(record));
    await rename(written, lockFile(dir));
    return 'taken';
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 'changed';
    throw error;
  } finally {
    await rm(mutex, { recursive: true, force: true });
  }
}

/**
 * Releases the lock in `dir`: moved aside before it is removed, since a
 * removal in place (which empties it, then deletes it) could take along a
 * lock published meanwhile over the emptied directory.
 */
export async function releaseNodeLock(dir: string): Promise<void> {
  const aside = `${dir}.released-${uniqueSuffix()}`;
  try {
    await rename(dir, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  await rm(aside, { recursive: true, force: true });
}

/** Records the node's process ids in the lock, so a later start knows the node is alive. */
export async function recordNodePids(pids: readonly number[]): Promise<void> {
  const holder = readLock(NODE_LOCK_DIR);
  if (!holder) return;
  // Renamed into place, so that a reader never sees a partly written owner (which would count as dead).
  const written = `${lockFile(NODE_LOCK_DIR)}.${uniqueSuffix()}`;
  await writeFile(written, JSON.stringify({ ...holder, pids } satisfies LockRecord));
  await rename(written, lockFile(NODE_LOCK_DIR));
}

function isZombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function readSysctl(name: string): string | undefined {
  try {
    return readFileSync(sysctlPath(name), 'utf8').trim();
  } catch {
    return undefined;
  }
}

async function sh(command: string, args: readonly string[]): Promise<string> {
  try {
    return (await run(command, args, { maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')}: ${(e.stderr || e.message).trim()}`);
  }
}

/**
 * Prepares the host for the node (lock held): records the sysctls it may
 * change, creates the state directories, the bridge with the node's address
 * (the API server listens there) and the service-CIDR route, and writes the
 * CNI configuration and the pods' resolv.conf.
 */
export async function prepareHost(n: NodeLayout = nodeLayout()): Promise<void> {
  const recorded = Object.fromEntries(NODE_SYSCTLS.map((name) => [name, readSysctl(name)]).filter(([, v]) => v !== undefined));
  await writeFile(sysctlFile(), JSON.stringify(recorded, null, 2) + '\n');
  await writeFile(hostPathsFile(), JSON.stringify(HOST_PATHS.filter((path) => existsSync(path))) + '\n');
  for (const dir of [n.stateDir, n.runDir, n.cniConfDir, n.cniIpamDir]) await mkdir(dir, { recursive: true });
  await writeFile(`${n.cniConfDir}/10-swarm.conflist`, cniConfig(n));
  await writeFile(n.resolvConf, nodeResolvConf());
  await sh('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
  await sh('ip', ['addr', 'add', `${NODE_IP}/${POD_CIDR.split('/')[1]}`, 'dev', BRIDGE]);
  await sh('ip', ['link', 'set', BRIDGE, 'up']);
  // Service traffic from the host goes to the bridge, never out of eth0.
  await sh('ip', ['route', 'add', SERVICE_CLUSTER_IP_RANGE, 'dev', BRIDGE, 'src', NODE_IP]);
}

/** `ctr -n k8s.io images import` of each archive into the node's containerd. */
export async function importImageArchives(
  archives: readonly ImageArchive[],
  onProgress: Progress,
  n: NodeLayout = nodeLayout(),
): Promise<void> {
  for (const archive of archives) {
    const started = Date.now();
    await sh(binPath('ctr'), ['--address', n.containerdSocket, '-n', 'k8s.io', 'images', 'import', '--local', archive.path]);
    const listed = await sh(binPath('ctr'), ['--address', n.containerdSocket, '-n', 'k8s.io', 'images', 'ls', '-q']);
    if (!listed.split('\n').includes(archive.name)) {
      throw new Error(`importing ${archive.path} did not produce the image ${archive.name} (got: ${listed.trim().split('\n').join(', ')})`);
    }
    onProgress(`imported ${archive.name} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  }
}

/** Pids of every process whose cgroup (any v1 hierarchy) is under kubepods, or that runs one of our shims. */
function nodeLeftoverPids(n: NodeLayout): number[] {
  const shim = safe(() => binPath('containerd-shim-runc-v2'));
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const cgroup = safe(() => readFileSync(`/proc/${pid}/cgroup`, 'utf8')) ?? '';
    const exe = safe(() => readlinkSync(`/proc/${pid}/exe`)) ?? '';
    const cmdline = safe(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8')) ?? '';
    if (/:\/kubepods/.test(cgroup) || (shim && exe === shim) || cmdline.includes(n.containerdSocket)) pids.push(pid);
  }
  return pids;
}

function safe<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** Mount points under `prefixes`, deepest first. */
function mountsUnder(prefixes: readonly string[]): string[] {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => !!p)
    .map((p) => p.replace(/\\040/g, ' '));
  return [...new Set(points.filter((p) => prefixes.some((prefix) => p === prefix || p.startsWith(`${prefix}/`))))].sort(
    (a, b) => b.length - a.length,
  );
}

/** Removes `dir` and its subdirectories, bottom-up, as far as they are empty. */
function removeEmptyTree(dir: string): void {
  for (const entry of safe(() => readdirSync(dir, { withFileTypes: true })) ?? []) {
    if (entry.isDirectory()) removeEmptyTree(`${dir}/${entry.name}`);
  }
  safe(() => rmdirSync(dir));
}

function removeCgroupTree(dir: string): void {
  // A pod's cgroup can vanish while the tree is walked (its last process just exited).
  const entries = safe(() => readdirSync(dir, { withFileTypes: true })) ?? [];
  for (const entry of entries) {
    if (entry.isDirectory()) removeCgroupTree(`${dir}/${entry.name}`);
  }
  try {
    rmdirSync(dir);
  } catch {
    // Busy (a process still in it) or already gone: reported by the caller's check.
  }
}

/**
 * Puts the machine back as it was before the node started; safe to run any
 * time, any number of times. Kills what runs in pods and the shims, unmounts
 * everything under the node's directories, deletes the bridge (its veths go
 * with the pods' network namespaces), removes the KUBE-* and CNI-* iptables
 * chains, the kubepods cgroups and the node's files, restores the recorded
 * sysctls, and releases the lock.
 */
export async function cleanupNode(onProgress: Progress, n: NodeLayout = nodeLayout()): Promise<void> {
  for (let round = 0; round < 20; round++) {
    const pids = nodeLeftoverPids(n);
    if (pids.length === 0) break;
    for (const pid of pids) safe(() => process.kill(pid, 'SIGKILL'));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  for (const point of mountsUnder([n.stateDir, n.runDir])) {
    if (spawnSync('umount', [point]).status !== 0) spawnSync('umount', ['-l', point]);
  }

  if (existsSync(`/sys/class/net/${BRIDGE}`)) {
    // Any veth still attached goes first (a netns kept alive elsewhere would keep it).
    for (const port of safe(() => readdirSync(`/sys/class/net/${BRIDGE}/brif`)) ?? []) spawnSync('ip', ['link', 'del', port]);
    spawnSync('ip', ['link', 'del', BRIDGE]);
  }

  for (const [save, restore] of [
    ['iptables-save', 'iptables-restore'],
    ['ip6tables-save', 'ip6tables-restore'],
  ] as const) {
    for (const table of ['filter', 'nat', 'mangle', 'raw']) {
      const dump = spawnSync(save, ['-t', table], { encoding: 'utf8' });
      if (dump.status !== 0) continue;
      const cleaned = withoutNodeRules(dump.stdout);
      if (cleaned === undefined) continue;
      const restored = spawnSync(restore, ['-w'], { input: cleaned, encoding: 'utf8' });
      if (restored.status !== 0) onProgress(`${restore} of table ${table} failed: ${restored.stderr.trim()}`);
    }
  }
  // kube-proxy's nftables mode tables, should a component have created them.
  for (const family of ['ip', 'ip6']) spawnSync('nft', ['delete', 'table', family, 'kube-proxy'], { stdio: 'ignore' });

  if (existsSync('/sys/fs/cgroup')) {
    for (const hierarchy of readdirSync('/sys/fs/cgroup')) {
      const kubepods = `/sys/fs/cgroup/${hierarchy}/kubepods`;
      if (safe(() => statSync(kubepods).isDirectory())) removeCgroupTree(kubepods);
    }
  }

  // What the components write outside the node's directories.
  for (const link of safe(() => readdirSync('/var/log/containers')) ?? []) {
    const target = safe(() => readlinkSync(`/var/log/containers/${link}`));
    if (target?.startsWith(`${n.podLogsDir}/`)) rmSync(`/var/log/containers/${link}`, { force: true });
  }
  for (const result of safe(() => readdirSync('/var/lib/cni/results')) ?? []) {
    if (/^(swarm|cni-loopback)-/.test(result)) rmSync(`/var/lib/cni/results/${result}`, { force: true });
  }
  rmSync('/var/lib/kubelet/device-plugins/kubelet.sock', { force: true });
  const existedBefore = safe(() => JSON.parse(readFileSync(hostPathsFile(), 'utf8')) as string[]) ?? HOST_PATHS;
  for (const path of HOST_PATHS.filter((p) => !existedBefore.includes(p))) removeEmptyTree(path);

  await rm(n.runDir, { recursive: true, force: true });
  await rm(n.stateDir, { recursive: true, force: true });

  const recorded = safe(() => JSON.parse(readFileSync(sysctlFile(), 'utf8')) as Record<string, string>) ?? {};
  for (const [name, value] of Object.entries(recorded)) {
    if (readSysctl(name) !== value) await writeFile(sysctlPath(name), value).catch(() => onProgress(`could not restore ${name}=${value}`));
  }
  await releaseNodeLock(NODE_LOCK_DIR);
}

/** What of the node is still on the machine (empty when clean): for checks and tests. */
export async function nodeLeftovers(n: NodeLayout = nodeLayout()): Promise<string[]> {
  const left: string[] = [];
  const pids = nodeLeftoverPids(n);
  if (pids.length) left.push(`processes ${pids.join(',')}`);
  const mounts = mountsUnder([n.stateDir, n.runDir]);
  if (mounts.length) left.push(`mounts ${mounts.join(',')}`);
  if (existsSync(`/sys/class/net/${BRIDGE}`)) left.push(`interface ${BRIDGE}`);
  const chains = (await sh('iptables-save', []).catch(() => ''))
    .split('\n')
    .filter((line) => line.startsWith(':') && isNodeChain(line.slice(1).split(' ')[0]!));
  if (chains.length) left.push(`iptables chains ${chains.join(',')}`);
  if (existsSync(NODE_LOCK_DIR)) left.push(`lock ${NODE_LOCK_DIR}`);
  return left;
}
