// `npm test` and the local cluster need what npm cannot install: Go (to build
// the pinned cluster on first use) and a few Debian packages. This checks for
// them and installs the missing packages through apt when it can (root on
// Debian), so the README's commands work on a fresh machine. `npm test` runs
// it as the `pretest` hook; startCluster calls ensureHostPackages itself, so
// `npm run cluster:up` and `npm start` need nothing installed by hand.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ensurePythonVenv } from './support/conformance/python-venv.js';

/** A Debian package, present when `check` (a command, or an absolute path) exists. */
export interface HostPackage {
  readonly check: string;
  readonly pkg: string;
  readonly why: string;
}

/** What the local cluster needs (control plane and real node). */
export const CLUSTER_PACKAGES: readonly HostPackage[] = [
  { check: 'openssl', pkg: 'openssl', why: 'the local cluster generates its certificates with it' },
  { check: 'ip', pkg: 'iproute2', why: "the real node's bridge and routes" },
  { check: '/usr/sbin/runc', pkg: 'runc', why: "the real node's container runtime" },
  { check: '/usr/lib/cni/bridge', pkg: 'containernetworking-plugins', why: "the real node's pod network (bridge, host-local, portmap)" },
  { check: 'iptables', pkg: 'iptables', why: "kube-proxy's service rules" },
  { check: 'conntrack', pkg: 'conntrack', why: 'kube-proxy flushes stale UDP service entries with it' },
  { check: 'gcc', pkg: 'gcc', why: 'the pause image is compiled from the kubernetes sources' },
  { check: '/usr/lib/x86_64-linux-gnu/libc.a', pkg: 'libc6-dev', why: 'the pause binary is linked statically' },
];

/** What images built from the Dockerfile need (test:image, the real node's workers, npm start). */
export const IMAGE_PACKAGES: readonly HostPackage[] = [
  { check: 'buildah', pkg: 'buildah', why: 'images are built from the Dockerfile with it' },
  { check: 'debootstrap', pkg: 'debootstrap', why: "the Dockerfile's node base image is made with it" },
];

/** What npm start's trace viewer (Zipkin, test/harness/zipkin-server.ts) needs; the trace-pipeline test runs it too. */
export const VIEWER_PACKAGES: readonly HostPackage[] = [
  { check: 'java', pkg: 'openjdk-17-jre-headless', why: "Zipkin's server, the trace viewer, runs on Java 17" },
  { check: 'mvn', pkg: 'maven', why: "Zipkin's server jar is fetched from Maven Central with it" },
];

/** What only the tests need on top. */
export const TEST_PACKAGES: readonly HostPackage[] = [
  { check: 'chromium', pkg: 'chromium', why: 'the introspection page is tested in it' },
];

const has = (check: string): boolean =>
  check.startsWith('/') ? existsSync(check) : spawnSync('sh', ['-c', `command -v ${check}`], { stdio: 'ignore' }).status === 0;
const say = (line: string) => process.stderr.write(`prereqs: ${line}\n`);

/** Installs the missing packages of `packages` with apt (once per machine); false when it can't. */
export function ensureHostPackages(packages: readonly HostPackage[] = CLUSTER_PACKAGES): boolean {
  const missing = packages.filter((p) => !has(p.check));
  if (missing.length === 0) return true;
  const canApt = has('apt-get') && process.getuid?.() === 0;
  if (!canApt) {
    for (const p of missing) say(`${p.check} is missing (${p.why}): install the Debian package ${p.pkg}.`);
    return false;
  }
  for (const p of missing) say(`installing ${p.pkg} (${p.why}), once`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '-qq', ...missing.map((p) => p.pkg)], { stdio: ['ignore', 'inherit', 'inherit'], env }).status === 0;
  // A fresh machine may have no package lists yet: update and retry once.
  if (!install()) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'inherit', 'inherit'], env });
    if (!install()) throw new Error(`apt-get install ${missing.map((p) => p.pkg).join(' ')} failed`);
  }
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let missing = 0;
  if (!has('go')) {
    say('Go is not installed: the tests build the local cluster (kube-apiserver, etcd, containerd, kubelet, KWOK, …) from pinned Go modules. Install Go ≥ 1.26.');
    missing += 1;
  }
  if (!ensureHostPackages([...CLUSTER_PACKAGES, ...IMAGE_PACKAGES, ...VIEWER_PACKAGES, ...TEST_PACKAGES])) missing += 1;
  // The Python worker SDK's dependencies (PyYAML, pytest) for its tests and the conformance suite: a venv in the cache, once.
  if (!has('python3')) {
    say('Python 3 is not installed: the Python worker SDK (sdk/python) is tested with it. Install python3 and python3-venv.');
    missing += 1;
  } else ensurePythonVenv(say);
  process.exit(missing ? 1 : 0);
}
