// RELEASES.json: every release's version and the commit it was cut from, in
// the repository (tags may not travel with a clone; a file does). Pure
// functions over its content; dev/release.ts reads and writes the file.
export interface ReleaseRecord {
  readonly version: string;
  readonly commit: string;
  readonly date: string;
  /** Image name → manifest digest, when the release was cut by npm run release. */
  readonly images?: Readonly<Record<string, string>>;
  readonly note?: string;
}

export interface Releases {
  readonly releases: readonly ReleaseRecord[];
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/;

export function parseVersion(version: string): { major: number; minor: number; patch: number; pre?: string } {
  const m = SEMVER.exec(version.replace(/^v/, ''));
  if (!m) throw new Error(`not a version (MAJOR.MINOR.PATCH[-PRE]): ${version}`);
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), ...(m[4] ? { pre: m[4] } : {}) };
}

export function parseReleases(text: string): Releases {
  const data = JSON.parse(text) as Releases;
  if (!Array.isArray(data.releases)) throw new Error('RELEASES.json: no "releases" list');
  for (const r of data.releases) {
    parseVersion(r.version);
    if (!/^[0-9a-f]{40}$/.test(r.commit)) throw new Error(`RELEASES.json: ${r.version}: commit must be a full sha`);
  }
  return data;
}

/** The last release recorded (the file is kept in release order). */
export function lastRelease(releases: Releases): ReleaseRecord | undefined {
  return releases.releases.at(-1);
}

/** The release cut from `commit`, if one was. */
export function releaseAt(releases: Releases, commit: string): ReleaseRecord | undefined {
  return releases.releases.find((r) => r.commit === commit);
}

/** Adds a release; a version recorded before is refused (a release is never cut twice). */
export function recordRelease(releases: Releases, release: ReleaseRecord): Releases {
  parseVersion(release.version);
  if (releases.releases.some((r) => r.version === release.version)) throw new Error(`v${release.version} is already recorded in RELEASES.json`);
  return { releases: [...releases.releases, release] };
}

export function renderReleases(releases: Releases): string {
  return JSON.stringify(releases, null, 2) + '\n';
}
