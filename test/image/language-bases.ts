// The base images of the Go and Python reference workers' targets, made here
// from a Debian rootfs (rootfs.ts) instead of pulled, under the names the
// Dockerfile's FROM lines give (so the same Dockerfile builds against the
// official images elsewhere):
// - golang:<GO_VERSION>-bookworm: ca-certificates (the build fetches modules
//   over HTTPS) and the Go toolchain as the Go module proxy serves it
//   (golang.org/toolchain, checked against go.sum's database by `go mod
//   download` here) in /usr/local/go; GOPATH /go, GOTOOLCHAIN=local. Not in
//   it, unlike the official image: gcc, git (the Dockerfile builds with
//   CGO_ENABLED=0 from copied sources).
// - python:<PYTHON_VERSION>-slim-bookworm: Debian's python3 and python3-venv
//   (whose pip the Dockerfile's venv uses); `python` is python3. Debian's
//   Python is in /usr/bin, not /usr/local/bin as the official image's.
import { createHash } from 'node:crypto';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { run, type ProgressFn } from './buildah.js';
import { ensureRootfsImage, PATH, readBasePins, type BaseImage, type BasePins } from './rootfs.js';

// Bump when a recipe below changes what its image contains.
const RECIPE_REVISION = 1;

const keyOf = (parts: Record<string, unknown>) => createHash('sha256').update(JSON.stringify({ RECIPE_REVISION, ...parts })).digest('hex').slice(0, 16);

export function goBaseFor(goVersion: string, pins: BasePins = readBasePins()): BaseImage {
  return { name: `docker.io/library/golang:${goVersion}-${pins.debianSuite}`, key: keyOf({ go: goVersion, suite: pins.debianSuite }) };
}

export function pythonBaseFor(pythonVersion: string, pins: BasePins = readBasePins()): BaseImage {
  return { name: `docker.io/library/python:${pythonVersion}-slim-${pins.debianSuite}`, key: keyOf({ python: pythonVersion, suite: pins.debianSuite }) };
}

/** The Go toolchain for linux/amd64 from the module proxy, into the host's module cache; returns its directory (a GOROOT). */
async function goToolchain(goVersion: string, onProgress: ProgressFn): Promise<string> {
  const module = `golang.org/toolchain@v0.0.1-go${goVersion}.linux-amd64`;
  onProgress(`go mod download ${module}`);
  const out = await run('go', ['mod', 'download', '-json', module], { cwd: '/', label: 'go toolchain download', onProgress });
  return (JSON.parse(out) as { Dir: string }).Dir;
}

export async function ensureGoBase(goVersion: string, onProgress: ProgressFn): Promise<BaseImage> {
  const pins = readBasePins();
  const base = goBaseFor(goVersion, pins);
  return ensureRootfsImage(
    {
      ...base,
      suite: pins.debianSuite,
      include: ['ca-certificates'],
      async populate(rootfs) {
        const goroot = join(rootfs, 'usr/local/go');
        await run('cp', ['-r', `${await goToolchain(goVersion, onProgress)}/.`, goroot]);
        // The module cache keeps files read-only and a module zip has no executable bits.
        await run('sh', ['-c', 'chmod -R u+w,a+rX "$1" && chmod 755 "$1"/bin/* "$1"/pkg/tool/*/*', 'chmod', goroot]);
        await mkdir(join(rootfs, 'go/bin'), { recursive: true });
      },
      env: { PATH: `/usr/local/go/bin:/go/bin:${PATH}`, GOPATH: '/go', GOTOOLCHAIN: 'local', GOLANG_VERSION: goVersion },
      cmd: ['bash'],
    },
    onProgress,
  );
}

export async function ensurePythonBase(pythonVersion: string, onProgress: ProgressFn): Promise<BaseImage> {
  const pins = readBasePins();
  const base = pythonBaseFor(pythonVersion, pins);
  return ensureRootfsImage(
    {
      ...base,
      suite: pins.debianSuite,
      include: ['python3', 'python3-venv'],
      async populate(rootfs) {
        const version = (await run('chroot', [rootfs, 'python3', '-c', 'import sys; print("%d.%d" % sys.version_info[:2])'])).trim();
        if (version !== pythonVersion) throw new Error(`Debian ${pins.debianSuite} has Python ${version}, the Dockerfile asks for ${pythonVersion}`);
        await symlink('/usr/bin/python3', join(rootfs, 'usr/local/bin/python'));
      },
      env: { PATH, LANG: 'C.UTF-8' },
      cmd: ['python3'],
    },
    onProgress,
  );
}
