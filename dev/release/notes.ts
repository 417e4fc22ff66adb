// Release notes: the commits since the last recorded release, as Markdown,
// newest first (git's order). Pure; dev/release.ts reads the commits.
export interface Commit {
  readonly sha: string;
  readonly subject: string;
}

export interface NotesInput {
  readonly version: string;
  readonly commit: string;
  /** The release this one follows (RELEASES.json), if any. */
  readonly previous?: { readonly version: string; readonly commit: string } | undefined;
  readonly commits: readonly Commit[];
  /** Image name → `registry/name@sha256:…`. */
  readonly images: Readonly<Record<string, string>>;
}

export function releaseNotes({ version, commit, previous, commits, images }: NotesInput): string {
  const since = previous ? `since v${previous.version} (${previous.commit.slice(0, 7)})` : 'in its history';
  return [
    `# Swarm v${version}`,
    '',
    `Cut from commit ${commit}.`,
    '',
    '## Install',
    '',
    '```sh',
    'kubectl apply --server-side -f swarm-crds.yaml',
    'kubectl apply --server-side -f swarm.yaml',
    '# or: helm install swarm swarm-' + version + '.tgz -n swarm-system --create-namespace',
    '```',
    '',
    '## Images',
    '',
    ...Object.entries(images).map(([name, ref]) => `- ${name}: \`${ref}\``),
    '',
    `## Changes ${since}`,
    '',
    ...(commits.length ? commits.map((c) => `- ${c.subject} (${c.sha.slice(0, 7)})`) : ['- none']),
    '',
  ].join('\n');
}
