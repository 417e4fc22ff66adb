// `npm test` needs two things npm cannot install: Go (to build the pinned
// control plane on first use) and Debian's Chromium (the introspection page's
// browser test). This checks for both and installs Chromium through apt when
// it can (root on Debian), so the README's test command works on a fresh machine.
import { spawnSync } from 'node:child_process';

const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const say = (line: string) => process.stdout.write(`prereqs: ${line}\n`);

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

let missing = 0;
if (!has('go')) {
  say('Go is not installed: the integration tests build kube-apiserver, etcd, KWOK and the Knative adapter from pinned Go modules. Install Go ≥ 1.24.');
  missing += 1;
}
if (!has('chromium')) {
  if (has('apt-get') && process.getuid?.() === 0) {
    say('installing Debian chromium for the browser test (once)');
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', 'chromium']);
  } else {
    say('chromium is not installed: `sudo apt-get install chromium` (Debian) — the introspection page is tested in it.');
    missing += 1;
  }
}
process.exit(missing ? 1 : 0);
