// Pushes a release image's OCI layout to its registry with skopeo (Debian's
// package; it reads the user's registry credentials, containers-auth.json or
// docker's config.json), --preserve-digests: the copy fails rather than
// recompress or convert, so the registry holds the manifest digest swarm.yaml
// names. Tagged with the version, then checked by digest.
import { ensureHostPackages } from '../../test/prereqs.js';
import { run } from '../../test/image/buildah.js';
import type { ProgressFn } from '../../test/controlplane/build.js';

export const PUSH_PACKAGES = [{ check: 'skopeo', pkg: 'skopeo', why: 'npm run release pushes the images with it' }] as const;

export interface PushOptions {
  /** The registry speaks plain HTTP (the local testbed's, on loopback). */
  readonly plainHttp?: boolean;
}

export async function pushLayout(layout: string, repository: string, version: string, digest: string, onProgress: ProgressFn, options: PushOptions = {}): Promise<void> {
  if (!ensureHostPackages(PUSH_PACKAGES)) throw new Error('skopeo is needed to push (see above), or use --no-push');
  onProgress(`pushing ${repository}:${version}`);
  const destTls = options.plainHttp ? ['--dest-tls-verify=false'] : [];
  await run('skopeo', ['copy', '--quiet', '--preserve-digests', ...destTls, `oci:${layout}:${version}`, `docker://${repository}:${version}`], { label: `push ${repository}`, onProgress });
  const tls = options.plainHttp ? ['--tls-verify=false'] : [];
  const pushed = (await run('skopeo', ['inspect', ...tls, '--format', '{{.Digest}}', `docker://${repository}@${digest}`])).trim();
  if (pushed !== digest) throw new Error(`${repository}: the registry holds ${pushed}, not ${digest}`);
}
