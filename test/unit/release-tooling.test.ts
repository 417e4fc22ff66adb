// npm run release's parts that need no builder: the command line, the OCI
// layout a push sends (compressed layers, the digest it names), the record of
// releases, the notes, and `swarm version`.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { describeVersion } from '../../bin/commands/version.js';
import { parseReleaseArgs, UsageError } from '../../dev/release/args.js';
import { releaseNotes } from '../../dev/release/notes.js';
import { writeCompressedLayout } from '../../dev/release/oci-layout.js';
import { lastRelease, parseReleases, recordRelease, releaseAt } from '../../dev/release/record.js';
import { ociArchive } from '../controlplane/oci.js';

const dir = mkdtempSync(join(tmpdir(), 'swarm-release-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha = (c: string): string => c.repeat(40);

describe('npm run release arguments', () => {
  it('registry and version are required; out defaults to dist/release; push and SBOM by default', () => {
    expect(parseReleaseArgs(['--registry', 'registry.example.com/swarm', '--version', 'v0.0.0-test'])).toEqual({
      registry: 'registry.example.com/swarm',
      version: '0.0.0-test',
      out: 'dist/release',
      push: true,
      sbom: true,
      plainHttp: false,
    });
    expect(parseReleaseArgs(['--registry=r:5000/x', '--version=1.2.3', '--out', 'D', '--no-push', '--no-sbom'])).toMatchObject({ out: 'D', push: false, sbom: false });
  });

  it.each([
    [['--version', '1.0.0'], /--registry is required/],
    [['--registry', 'r/x'], /--version is required/],
    [['--registry', 'https://r/x', '--version', '1.0.0'], /without scheme/],
    [['--registry', 'r/x', '--version', '1.0'], /not a version/],
    [['--registry', 'r/x', '--version', '1.0.0', '--push'], /unknown option "--push"/],
  ])('%j is refused', (argv, why) => {
    expect(() => parseReleaseArgs(argv)).toThrow(UsageError);
    expect(() => parseReleaseArgs(argv)).toThrow(why);
  });
});

describe('the OCI layout a push sends', () => {
  const layer = [{ type: 'file' as const, path: 'hello', mode: 0o644, data: Buffer.from('hello\n'.repeat(1000)) }];
  const { archive } = ociArchive('local/x:1', layer, { entrypoint: ['/hello'] });
  const archivePath = join(dir, 'x.tar');
  writeFileSync(archivePath, archive);
  const blob = (layoutDir: string, digest: string): Buffer => readFileSync(join(layoutDir, 'blobs/sha256', digest.slice(7)));

  it('an uncompressed layer is gzipped; index.json names the manifest by the sha256 of its bytes, with version and commit', async () => {
    const layout = await writeCompressedLayout(archivePath, join(dir, 'a'), { version: '1.2.3', revision: sha('f') });
    const index = JSON.parse(readFileSync(join(dir, 'a', 'index.json'), 'utf8'));
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0].digest).toBe(layout.digest);
    expect(index.manifests[0].annotations).toMatchObject({ 'org.opencontainers.image.ref.name': '1.2.3', 'org.opencontainers.image.revision': sha('f') });
    const manifestBytes = blob(join(dir, 'a'), layout.digest);
    expect(`sha256:${createHash('sha256').update(manifestBytes).digest('hex')}`).toBe(layout.digest);
    const manifest = JSON.parse(manifestBytes.toString());
    expect(manifest.layers[0].mediaType).toBe('application/vnd.oci.image.layer.v1.tar+gzip');
    const gz = blob(join(dir, 'a'), manifest.layers[0].digest);
    expect(gz.length).toBe(manifest.layers[0].size);
    expect(gz.length).toBeLessThan(archive.length / 4);
    expect(gunzipSync(gz).includes(Buffer.from('hello\nhello\n'))).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'a', 'oci-layout'), 'utf8'))).toEqual({ imageLayoutVersion: '1.0.0' });
  });

  it('is deterministic, and an already compressed image passes with its own digest (what buildah wrote is what is pushed)', async () => {
    const first = await writeCompressedLayout(archivePath, join(dir, 'b'), { version: '1', revision: sha('1') });
    const again = await writeCompressedLayout(archivePath, join(dir, 'c'), { version: '2', revision: sha('2') });
    expect(again.digest).toBe(first.digest);
    // The compressed layout, archived as buildah would, converts to itself.
    const { execFileSync } = await import('node:child_process');
    execFileSync('tar', ['-cf', join(dir, 'b.tar'), '-C', join(dir, 'b'), '.']);
    const passed = await writeCompressedLayout(join(dir, 'b.tar'), join(dir, 'd'), { version: '1', revision: sha('1') });
    expect(passed.digest).toBe(first.digest);
  });
});

describe('RELEASES.json and release notes', () => {
  const releases = parseReleases(readFileSync(new URL('../../RELEASES.json', import.meta.url), 'utf8'));

  it('records v0.1.0 first; a version is never recorded twice', () => {
    expect(releases.releases[0]?.version).toBe('0.1.0');
    const next = recordRelease(releases, { version: '0.2.0', commit: sha('a'), date: '2026-12-01' });
    expect(lastRelease(next)?.version).toBe('0.2.0');
    expect(releaseAt(next, sha('a'))?.version).toBe('0.2.0');
    expect(() => recordRelease(next, { version: '0.2.0', commit: sha('b'), date: '' })).toThrow(/already recorded/);
    expect(() => parseReleases('{"releases":[{"version":"1.0.0","commit":"abc"}]}')).toThrow(/full sha/);
  });

  it('the tree is versioned past the last release', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const [a, b] = [lastRelease(releases)!.version, pkg.version].map((v) => v.split(/[.-]/).slice(0, 3).map(Number) as [number, number, number]);
    expect(b![0] * 1e6 + b![1] * 1e3 + b![2]).toBeGreaterThan(a![0] * 1e6 + a![1] * 1e3 + a![2]);
    expect(pkg.version).toMatch(/-dev$/);
  });

  it('notes list the commits since the previous release and the images by digest', () => {
    const notes = releaseNotes({
      version: '0.2.0',
      commit: sha('a'),
      previous: { version: '0.1.0', commit: sha('5') },
      commits: [{ sha: sha('a'), subject: 'release tool' }, { sha: sha('9'), subject: 'chart' }],
      images: { swarm: `r/swarm@sha256:${'1'.repeat(64)}` },
    });
    expect(notes).toContain('# Swarm v0.2.0');
    expect(notes).toContain('## Changes since v0.1.0 (5555555)');
    expect(notes).toContain('- release tool (aaaaaaa)\n- chart (9999999)');
    expect(notes).toContain(`- swarm: \`r/swarm@sha256:${'1'.repeat(64)}\``);
  });
});

describe('swarm version', () => {
  const releases = [{ version: '0.1.0', commit: sha('5') }];

  it('a release commit prints the release version; any other commit the tree version; a modified tree says so', () => {
    expect(describeVersion({ packageVersion: '0.2.0-dev', commit: sha('5'), modified: false, releases }).line).toBe(`swarm 0.1.0 (commit ${sha('5')}, release)`);
    expect(describeVersion({ packageVersion: '0.2.0-dev', commit: sha('6'), modified: false, releases }).line).toBe(`swarm 0.2.0-dev (commit ${sha('6')})`);
    expect(describeVersion({ packageVersion: '0.2.0-dev', commit: sha('5'), modified: true, releases })).toMatchObject({ version: '0.2.0-dev', release: false });
    expect(describeVersion({ packageVersion: '0.2.0-dev', commit: undefined, modified: false, releases }).line).toBe('swarm 0.2.0-dev (commit unknown)');
  });
});
