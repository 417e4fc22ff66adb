// Pure helpers for the image build: where Debian comes from (the machine's own
// apt sources, so no mirror is written into the repo), which files are in the
// build context (.dockerignore), and the hash that keys the cached archives.
import { createHash } from 'node:crypto';

/**
 * The first http(s) mirror of `suite` in apt's sources: one-line
 * sources.list entries (`deb [opts] URI suite components`) and deb822
 * `.sources` stanzas (`Types: deb`, `URIs:`, `Suites:`), in the order given.
 */
export function debianMirror(files: readonly string[], suite: string): string | undefined {
  for (const text of files) {
    for (const line of text.split('\n')) {
      const words = line.replace(/#.*/, '').replace(/\[[^\]]*\]/, ' ').trim().split(/\s+/);
      if (words[0] === 'deb' && words[2] === suite && /^https?:\/\//.test(words[1] ?? '')) return words[1];
    }
    for (const stanza of text.split(/\n\s*\n/)) {
      const field = (name: string): string[] =>
        new RegExp(`^${name}:[ \\t]*(.*)$`, 'mi').exec(stanza.replace(/^#.*$/gm, ''))?.[1]?.trim().split(/\s+/) ?? [];
      if (field('Enabled')[0]?.toLowerCase() === 'no') continue;
      if (!field('Types').includes('deb') || !field('Suites').includes(suite)) continue;
      const uri = field('URIs').find((u) => /^https?:\/\//.test(u));
      if (uri) return uri;
    }
  }
  return undefined;
}

// Glob tokens of a .dockerignore line as regular expression source.
const GLOB: Record<string, string> = { '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' };

/**
 * A .dockerignore as a predicate over context-relative paths ('a/b.ts').
 * Docker's rules, the subset that matters here: `*` and `?` within one path
 * segment, `**` across segments, a match on a directory covers everything
 * under it, `!` re-includes, the last matching line wins.
 */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const include = line.startsWith('!');
      const pattern = (include ? line.slice(1) : line).replace(/^\/+|\/+$/g, '').replace(/^\.\//, '');
      const source = pattern
        .split(/(\*\*\/?|\*|\?)/)
        .map((part) => GLOB[part] ?? part.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
        .join('');
      return { include, regex: new RegExp(`^${source}(?:/.*)?$`) };
    });
  return (path) => {
    let ignored = false;
    for (const rule of rules) if (rule.regex.test(path)) ignored = !rule.include;
    return ignored;
  };
}

export interface ContextFile {
  readonly path: string;
  readonly mode: number;
  readonly content: Buffer;
}

/** sha256 over the named parts and every context file (path, mode, bytes), in path order. */
export function inputsHash(parts: Readonly<Record<string, string>>, files: readonly ContextFile[]): string {
  const hash = createHash('sha256');
  for (const [name, value] of Object.entries(parts).sort(([a], [b]) => a.localeCompare(b))) hash.update(`${name}=${value}\0`);
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    hash.update(`${file.path}\0${(file.mode & 0o777).toString(8)}\0${file.content.length}\0`);
    hash.update(file.content);
  }
  return hash.digest('hex');
}
