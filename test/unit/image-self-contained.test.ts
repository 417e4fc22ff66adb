// The image's build stage compiles only what the Dockerfile copies into it.
// Everything those files import must resolve inside the copied folders, to a
// Node builtin, or to a production dependency: dev tooling (test/, bench/,
// dev/) and devDependencies are not there, and `docker build` would fail
// (TS2307) or the runtime would (ERR_MODULE_NOT_FOUND) — the folders are read
// from the Dockerfile's COPY lines, not listed here.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');

/** Sources of the COPY lines (from the build context, not --from) of one stage. */
function copiedInto(dockerfile: string, stage: string): string[] {
  const sources: string[] = [];
  let current: string | undefined;
  for (const line of dockerfile.split('\n')) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) current = from[1];
    const copy = /^COPY\s+(.*)$/i.exec(line);
    if (!copy || current !== stage) continue;
    const args = (copy[1] as string).trim().split(/\s+/);
    if (args.some((a) => a.startsWith('--from'))) continue;
    sources.push(...args.filter((a) => !a.startsWith('--')).slice(0, -1));
  }
  return sources;
}

interface ForeignImport {
  file: string;
  specifier: string;
  why: string;
}

const packageName = (specifier: string): string =>
  specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** Imports of `files` (repo-relative) that leave `folders` or need a package outside `dependencies`. */
function foreignImports(
  files: ReadonlyMap<string, string>,
  folders: readonly string[],
  dependencies: readonly string[],
  exists: (path: string) => boolean = (p) => files.has(p),
): ForeignImport[] {
  const inside = (path: string) => folders.some((f) => path === f || path.startsWith(`${f}/`));
  const found: ForeignImport[] = [];
  for (const [file, text] of files) {
    for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
      if (specifier.startsWith('.')) {
        const target = join(dirname(file), specifier).split(sep).join('/');
        const candidates = [target, target.replace(/\.js$/, '.ts'), `${target}.ts`, `${target}/index.ts`];
        if (!inside(target)) found.push({ file, specifier, why: `${target} is not copied into the build stage` });
        else if (!candidates.some(exists)) found.push({ file, specifier, why: `${target} does not exist` });
      } else if (specifier.startsWith('node:') || builtinModules.includes(specifier)) {
        continue;
      } else if (!dependencies.includes(packageName(specifier))) {
        found.push({ file, specifier, why: `${packageName(specifier)} is not a production dependency` });
      }
    }
  }
  return found;
}

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(repo, folder), { recursive: true, encoding: 'utf8' })
    .map((p) => `${folder}/${p.split(sep).join('/')}`)
    .filter((p) => /\.(ts|mts|js|mjs)$/.test(p) && !/\.test\.ts$/.test(p) && statSync(join(repo, p)).isFile());
}

describe('the image build stage is self-contained', () => {
  const copied = copiedInto(readFileSync(join(repo, 'Dockerfile'), 'utf8'), 'build');
  const folders = copied.filter((p) => existsSync(join(repo, p)) && statSync(join(repo, p)).isDirectory());
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };

  it('reads the copied folders from the Dockerfile', () => {
    expect(folders).toEqual(expect.arrayContaining(['lib', 'functions']));
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'tsconfig.json', 'tsconfig.build.json']));
  });

  it('compiles only copied folders (tsconfig.build.json include)', () => {
    const build = JSON.parse(readFileSync(join(repo, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    expect(build.include.filter((p) => !folders.includes(p.split('/')[0] as string))).toEqual([]);
  });

  it('every import of the copied sources resolves inside them or to a production dependency', () => {
    const files = new Map(folders.flatMap(sourcesUnder).map((p) => [p, readFileSync(join(repo, p), 'utf8')] as const));
    expect(files.size).toBeGreaterThan(10);
    const problems = foreignImports(files, folders, Object.keys(pkg.dependencies ?? {}), (p) => existsSync(join(repo, p)));
    expect(problems.map((p) => `${p.file}: '${p.specifier}' (${p.why})`)).toEqual([]);
  });

  it('flags an import of dev tooling, a missing file and a devDependency', () => {
    const files = new Map([
      ['bin/start.ts', "import { startCluster } from '../test/controlplane/cluster.js';\nimport type { Foo } from './gone.js';"],
      ['lib/a.ts', "import fc from 'fast-check';\nimport { pino } from 'pino';\nimport { x } from '@scope/pkg/sub';\nexport * from './b.js';"],
      ['lib/b.ts', "import { readFileSync } from 'node:fs';\nimport path from 'path';\nconst m = await import('../functions/c.js');"],
      ['functions/c.ts', ''],
    ]);
    const problems = foreignImports(files, ['lib', 'functions', 'bin'], ['pino', '@scope/pkg']);
    expect(problems.map((p) => `${p.file} ${p.specifier}`)).toEqual([
      'bin/start.ts ../test/controlplane/cluster.js',
      'bin/start.ts ./gone.js',
      'lib/a.ts fast-check',
    ]);
  });
});
