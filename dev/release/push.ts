// Pushes a release image's OCI layout to its registry with skopeo (Debian's
// package; it reads the user's registry credentials, containers-auth.json or
// docker's config.json), --preserve-digests: the copy fails rather than
// recompress or convert, so the registry holds the manifest digest swarm.yaml
// names. Tagged with the version, then checked by digest.
import { ensureHostPackages } from '../../test/prereqs.js';
import { run } from '../../test/image/buildah.js';
import type { ProgressFn } from '../../test/controlplane/build.js';

export const PUSH_PACKAGES = [{ check: 'skopeo', pkg: 'skopeo', why: 'npm run release pushes the images with it' }] as const;

export async function pushLayout(layout: string, repository: string, version: string, digest: string, onProgress: ProgressFn): Promise<void> {
  if (!ensureHostPackages(PUSH_PACKAGES)) throw new Error('skopeo is needed to push (see above), or use --no-push');
  // A registry without TLS (the local testbed's) is named with SKOPEO_TLS_VERIFY=false.
  const tls = process.env.SKOPEO_TLS_VERIFY === 'false' ? ['--dest-tls-verify=false'] : [];
  onProgress(`pushing ${repository}:${version}`);
  await run('skopeo', ['copy', '--quiet', '--preserve-digests', ...tls, `oci:${layout}:${version}`, `docker://${repository}:${version}`], { label: `push ${repository}`, onProgress });
  const inspectTls = process.env.SKOPEO_TLS_VERIFY === 'false' ? ['--tls-verify=false'] : [];
  const pushed = (await run('skopeo', ['inspect', ...inspectTls, '--format', '{{.Digest}}', `docker://${repository}@${digest}`])).trim();
  if (pushed !== digest) throw new Error(`${repository}: the registry holds ${pushed}, not ${digest}`);
}
