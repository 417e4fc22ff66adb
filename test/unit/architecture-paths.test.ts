// ARCHITECTURE.md and the docs match the tree: every repository path they
// name exists, ARCHITECTURE.md stays one page, and every section of
// docs/design.md that another file cites by name is still there.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');
const read = (file: string): string => readFileSync(join(repo, file), 'utf8');

const ROOTS = ['lib/', 'functions/', 'knative/', 'test/', 'bench/', 'bin/', 'dev/', 'examples/', '.ci/'];
const isRepoPath = (text: string): boolean => ROOTS.some((root) => text.startsWith(root));

/** `a/{b,c}/d` → `a/b/d`, `a/c/d` (nested braces are not used). */
function expandBraces(path: string): string[] {
  const brace = /\{([^{}]*)\}/.exec(path);
  if (!brace) return [path];
  const [whole, alternatives] = brace as unknown as [string, string];
  return alternatives.split(',').flatMap((alt) => expandBraces(path.replace(whole, alt)));
}

/**
 * Repository paths a Markdown text names: in backticks, and as words of its
 * fenced blocks (the event-path diagram). A trailing `/` is dropped.
 */
function namedPaths(markdown: string): string[] {
  const candidates: string[] = [];
  const fences = markdown.split(/^```.*$/m);
  fences.forEach((part, i) => {
    if (i % 2 === 1) candidates.push(...part.split(/[\s(),;:]+/));
    else for (const match of part.matchAll(/`([^`\n]+)`/g)) candidates.push(match[1] as string);
  });
  return [...new Set(candidates.filter((c) => c.includes('/') && isRepoPath(c)).flatMap(expandBraces).map((p) => p.replace(/\/$/, '')))].sort();
}

/** The pages that describe the tree: the root's, and every page of docs/. */
const DOCS = ['README.md', 'ARCHITECTURE.md', ...readdirSync(join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

describe('ARCHITECTURE.md and the docs match the tree', () => {
  for (const doc of DOCS) {
    it(`${doc}: every repository path it names exists`, () => {
      const paths = namedPaths(read(doc));
      if (doc === 'ARCHITECTURE.md' || doc === 'docs/design.md') expect(paths.length).toBeGreaterThan(0);
      expect(paths.filter((p) => !existsSync(join(repo, p)))).toEqual([]);
    });
  }

  it('ARCHITECTURE.md is one page', () => {
    const text = read('ARCHITECTURE.md');
    expect(text.split('\n').length).toBeLessThanOrEqual(90);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(10 * 1024);
  });

  it('every docs/design.md section cited by name (design.md, "…") is a heading or a bullet of it', () => {
    const design = read('docs/design.md');
    const citing = [...DOCS, 'bench/RESULTS.md', 'test/unit/recovery.test.ts'];
    const cited = citing.flatMap((file) => [...read(file).matchAll(/design\.md, "([^"]+)"/gi)].map((m) => (m[1] as string).replace(/\s+/g, ' ')));
    expect(cited.length).toBeGreaterThan(0);
    const missing = cited.filter((name) => !design.includes(`## ${name}\n`) && !design.includes(`- **${name}`));
    expect(missing).toEqual([]);
  });

  it('namedPaths reads backticks and diagrams, drops trailing slashes, expands braces', () => {
    const text = 'See `lib/a.ts`, `functions/{x,y}/` and `npm start`.\n```\n lib/b/ the b (functions/c.ts)\n```\n`README.md`';
    expect(namedPaths(text)).toEqual(['functions/c.ts', 'functions/x', 'functions/y', 'lib/a.ts', 'lib/b']);
  });
});
