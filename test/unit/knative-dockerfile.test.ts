import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readDockerfile } from '../../test/image/dockerfile.js';

const dockerfile = readFileSync(resolve(import.meta.dirname, '../../Dockerfile'), 'utf8');

describe('Dockerfile', () => {
  it('names the Node version and the entry point of each target, which test:image runs', () => {
    const facts = readDockerfile(dockerfile);
    expect(facts.nodeVersion).toMatch(/^\d+\.\d+\.\d+$/);
    // An even major: an LTS line.
    expect(Number(facts.nodeVersion.split('.')[0]) % 2).toBe(0);
    expect(facts.commands.functions).toEqual(['node', 'functions.mjs']);
    expect(facts.commands.worker).toEqual(['node', 'worker/main.mjs']);
  });

  it('runs as a numeric non-root user, and defaults to the functions target', () => {
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect(runtime).toMatch(/^USER 1000:1000$/m);
    const stages = [...dockerfile.matchAll(/^FROM .* AS (\S+)$/gm)].map((m) => m[1]);
    expect(stages[stages.length - 1]).toBe('functions');
  });

  it('ships each target as its bundle and source map, without node_modules', () => {
    const shipped = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect(shipped).not.toMatch(/node_modules/);
    expect(shipped).toMatch(/\/src\/dist\/functions\.mjs \/src\/dist\/functions\.mjs\.map \.\/$/m);
    expect(shipped).toMatch(/\/src\/dist\/worker \.\/worker$/m);
    expect(dockerfile).toMatch(/npm run build && npm run bundle/);
    // Each bundle has its source map beside it (NODE_OPTIONS=--enable-source-maps uses it).
    const scripts = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['bundle:functions']).toMatch(/--outfile=dist\/functions\.mjs .*--sourcemap/);
    expect(scripts['bundle:worker']).toMatch(/--outdir=dist\/worker .*--sourcemap/);
  });

  it('builds the Go and Python reference workers as targets of their own, pinned, non-root', () => {
    const facts = readDockerfile(dockerfile);
    expect(facts.goVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(facts.pythonVersion).toMatch(/^\d+\.\d+$/);
    expect(facts.commands['worker-go']).toEqual(['/worker']);
    expect(facts.commands['worker-python']).toEqual(['python3', 'worker.py']);
    for (const target of ['worker-go', 'worker-python']) {
      const stage = dockerfile.slice(dockerfile.indexOf(`AS ${target}\n`)).split(/^FROM /m)[0];
      expect(stage).toMatch(/^USER 1000:1000$/m);
    }
  });

  it('rejects a Dockerfile without a pinned Node version', () => {
    expect(() => readDockerfile('FROM node:lts AS build\n')).toThrow(/NODE_VERSION/);
  });
});
