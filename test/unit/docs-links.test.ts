// Every relative link of every Markdown page of the repository leads somewhere:
// the file (or folder) exists, and an `#anchor` is a heading of the page it
// points into (GitHub's slugs). External links are not fetched.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, isExternal, linksOf, slug, splitTarget } from '../support/markdown-links.js';

const repo = resolve(import.meta.dirname, '..', '..');
const SKIPPED = /^(node_modules|dist|\.swarm|coverage)\//;

/** The repository's files as git sees them (tracked, or new and not ignored); a walk when there is no git. */
function repositoryFiles(): string[] {
  try {
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8' });
    return listed.split('\0').filter((f) => f && existsSync(join(repo, f)) && !SKIPPED.test(f));
  } catch {
    const walk = (dir: string): string[] =>
      readdirSync(join(repo, dir), { withFileTypes: true }).flatMap((entry) => {
        const path = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.name === '.git' || SKIPPED.test(`${path}/`)) return [];
        return entry.isDirectory() ? walk(path) : [path];
      });
    return walk('');
  }
}

describe('links between the repository’s pages', () => {
  const files = repositoryFiles();
  const fileSet = new Set(files);
  const folders = new Set(files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  const exists = (path: string): boolean => {
    const clean = path.replace(/\/$/, '');
    return clean === '' || fileSet.has(clean) || folders.has(clean);
  };
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (path: string): Set<string> => {
    if (!anchorCache.has(path)) anchorCache.set(path, anchorsOf(readFileSync(join(repo, path), 'utf8')));
    return anchorCache.get(path) as Set<string>;
  };
  const pages = files.filter((f) => f.endsWith('.md'));

  it('finds the pages (README, ARCHITECTURE and docs/ among them)', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'docs/README.md']));
  });

  for (const page of pages) {
    it(`${page}: every relative link and anchor resolves`, () => {
      expect(brokenLinks(page, readFileSync(join(repo, page), 'utf8'), exists, anchorsIn)).toEqual([]);
    });
  }
});

describe('the link checker', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('What `npm start` shows')).toBe('what-npm-start-shows');
    expect(slug('Tracing one change through Knative (test/harness/knative-tracing.ts, trace-sink.ts)')).toBe(
      'tracing-one-change-through-knative-testharnessknative-tracingts-trace-sinkts',
    );
    expect(slug('Symptoms → causes — fixes')).toBe('symptoms--causes--fixes');
    expect(slug('**Limits.** at most 5,000 jobs')).toBe('limits-at-most-5000-jobs');
    expect(slug('The [CLI](cli.md) and its_flags')).toBe('the-cli-and-its_flags');
    expect(slug('J = 10,000 jobs')).toBe('j--10000-jobs');
  });

  it('numbers repeated headings and ignores headings inside fenced code', () => {
    const page = '# A\n## Usage\ntext\n```sh\n# not a heading\n```\n## Usage\n<a name="custom"></a>\n';
    expect([...anchorsOf(page)].sort()).toEqual(['a', 'custom', 'usage', 'usage-1']);
  });

  it('reads inline links, images and definitions, not code', () => {
    const page = 'See [x](a.md#b "title") and ![i](img.svg).\n`[not](code.md)`\n```\n[nor](fenced.md)\n```\n[ref]: ../up.md\n[ext](https://example.com)';
    expect(linksOf(page).map((l) => l.target)).toEqual(['a.md#b', 'img.svg', '../up.md', 'https://example.com']);
    expect(isExternal('https://example.com')).toBe(true);
    expect(isExternal('docs/a.md')).toBe(false);
    expect(splitTarget('a%20b.md#c')).toEqual({ path: 'a b.md', anchor: 'c' });
  });

  it('fails on a missing file and on a missing anchor', () => {
    const files = new Set(['docs/a.md', 'docs/b.md']);
    const pages: Record<string, string> = { 'docs/a.md': '# Title\n## Part one\n', 'docs/b.md': '' };
    const exists = (p: string): boolean => files.has(p) || p === 'docs';
    const anchorsIn = (p: string): Set<string> => anchorsOf(pages[p] ?? '');
    const check = (text: string): string[] => {
      pages['docs/b.md'] = text;
      return brokenLinks('docs/b.md', text, exists, anchorsIn);
    };
    expect(check('[ok](a.md#part-one) [dir](../docs/) [self](#top)\n# Top')).toEqual([]);
    expect(check('[gone](gone.md)')).toEqual(['docs/b.md:1: gone.md: no such file']);
    expect(check('x\n[typo](a.md#part-two)')).toEqual(['docs/b.md:2: a.md#part-two: no heading #part-two in docs/a.md']);
    expect(check('[out](../../x.md)')).toEqual(['docs/b.md:1: ../../x.md: leaves the repository']);
  });
});
