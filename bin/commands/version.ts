// swarm version: the version and the commit this tree (or release) is. A
// commit recorded in RELEASES.json as a release's prints that release's
// version; any other commit prints package.json's version, which is past the
// last release (e.g. 0.2.0-dev after v0.1.0). Outside a git checkout the
// commit is unknown.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { processIo, type Io } from './assign.js';
import { CliError } from './cli-error.js';

const repo = resolve(import.meta.dirname, '../..');

export interface VersionFacts {
  /** package.json's version. */
  readonly packageVersion: string;
  /** HEAD's full sha, when this is a git checkout. */
  readonly commit: string | undefined;
  /** Tracked files differ from HEAD. */
  readonly modified: boolean;
  /** RELEASES.json's entries. */
  readonly releases: readonly { readonly version: string; readonly commit: string }[];
}

/** `swarm 0.1.0 (commit 5d27b78…)`, or a development tree's `swarm 0.2.0-dev (commit …, 12 files modified)`. */
export function describeVersion(facts: VersionFacts): { version: string; commit: string; release: boolean; line: string } {
  const release = facts.commit && !facts.modified ? facts.releases.find((r) => r.commit === facts.commit) : undefined;
  const version = release?.version ?? facts.packageVersion;
  const commit = facts.commit ?? 'unknown';
  const line = `swarm ${version} (commit ${commit}${facts.modified ? ', modified' : ''}${release ? ', release' : ''})`;
  return { version, commit, release: release !== undefined, line };
}

function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

export function readVersionFacts(root: string = repo): VersionFacts {
  const packageVersion = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  let releases: VersionFacts['releases'] = [];
  try {
    releases = (JSON.parse(readFileSync(join(root, 'RELEASES.json'), 'utf8')) as { releases: VersionFacts['releases'] }).releases;
  } catch {
    // No record: a tree from before the first release.
  }
  const commit = git(['rev-parse', 'HEAD']);
  const modified = commit !== undefined && (git(['status', '--porcelain', '--untracked-files=no']) ?? '') !== '';
  return { packageVersion, commit, modified, releases };
}

export async function run(argv: string[], io: Io = processIo): Promise<number> {
  const json = argv.includes('--json');
  const unknown = argv.filter((a) => a !== '--json');
  if (unknown.length) throw new CliError(`unknown option "${unknown[0]}" (usage: swarm version [--json])`);
  const described = describeVersion(readVersionFacts());
  io.stdout(json ? JSON.stringify({ version: described.version, commit: described.commit, release: described.release }) + '\n' : described.line + '\n');
  return 0;
}
