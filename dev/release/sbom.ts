// An SBOM per release image: syft (github.com/anchore/syft, built from its
// pinned Go module into the swarm cache on first use) reads the image's OCI
// layout and writes CycloneDX JSON: the Debian packages of the base, the Node
// binary, npm's own packages. The functions' and the worker's npm dependencies
// are bundled by esbuild into one file (no package.json left for a scanner),
// so syft's scan of package-lock.json (production dependencies) is written
// beside them as app-npm.cdx.json.
import { join } from 'node:path';
import { ensureBuilt, type ProgressFn } from '../../test/controlplane/build.js';
import { run } from '../../test/image/buildah.js';

/** syft must not look for a newer syft (there is no such network here, and a release should not depend on one). */
const SYFT_ENV = { SYFT_CHECK_FOR_APP_UPDATE: 'false' };

export async function syftBinary(onProgress: ProgressFn): Promise<string> {
  return (await ensureBuilt(onProgress, ['syft'])).syft!;
}

/** Writes `<out>/<name>.cdx.json` for the OCI layout `layout`; returns its path. */
export async function imageSbom(syft: string, layout: string, name: string, out: string, onProgress: ProgressFn): Promise<string> {
  const file = join(out, `${name}.cdx.json`);
  await run('env', [...Object.entries(SYFT_ENV).map(([k, v]) => `${k}=${v}`), syft, 'scan', `oci-dir:${layout}`, '-q', '-o', `cyclonedx-json=${file}`], {
    label: `syft ${name}`,
    onProgress,
  });
  return file;
}

/** The application's production npm dependencies (package-lock.json), as bundled into both images. */
export async function appSbom(syft: string, repo: string, out: string, onProgress: ProgressFn): Promise<string> {
  const file = join(out, 'app-npm.cdx.json');
  await run('env', [...Object.entries(SYFT_ENV).map(([k, v]) => `${k}=${v}`), syft, 'scan', `file:${join(repo, 'package-lock.json')}`, '-q', '-o', `cyclonedx-json=${file}`], {
    label: 'syft package-lock.json',
    onProgress,
  });
  return file;
}
