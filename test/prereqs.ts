// `npm test` needs what npm cannot install: Go (to build the pinned control
// plane on first use), and the Debian packages listed below. This checks for them and installs the
// Debian packages through apt when it can (root on Debian), so the README's
// test command works on a fresh machine.
import { spawnSync } from 'node:child_process';

const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const say = (line: string) => process.stdout.write(`prereqs: ${line}\n`);
const canApt = has('apt-get') && process.getuid?.() === 0;
let updated = false;

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

/** Installs a Debian package if the command is missing; false when it can't. */
function ensure(command: string, pkg: string, why: string): boolean {
  if (has(command)) return true;
  if (!canApt) {
    say(`${command} is not installed (${why}): install the Debian package ${pkg}.`);
    return false;
  }
  say(`installing ${pkg} (${why}), once`);
  if (!updated) run('apt-get', ['update', '-qq']);
  updated = true;
  run('apt-get', ['install', '-y', '-qq', pkg]);
  return true;
}

let missing = 0;
if (!has('go')) {
  say('Go is not installed: the integration tests build kube-apiserver, etcd, KWOK and the Knative adapter from pinned Go modules. Install Go ≥ 1.24.');
  missing += 1;
}
// command → Debian package, and why.
const debianPackages: readonly (readonly [string, string, string])[] = [
  ['openssl', 'openssl', 'the local control plane generates its certificates with it'],
  ['chromium', 'chromium', 'the introspection page is tested in it'],
  ['buildah', 'buildah', 'test:image builds the Dockerfile with it'],
  ['debootstrap', 'debootstrap', "test:image makes the Dockerfile's node base image with it"],
];
for (const [command, pkg, why] of debianPackages) if (!ensure(command, pkg, why)) missing += 1;
process.exit(missing ? 1 : 0);
