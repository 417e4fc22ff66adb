// The release's kustomize subset (dev/release/kustomize.ts, which the release
// and the chart generator render knative/ with) renders what `kubectl
// kustomize` renders, for every tree they use. Needs only the cluster's
// kubectl, not the cluster.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { parseDocuments, renderKustomization, type Doc } from '../../dev/release/kustomize.js';

const repo = resolve(import.meta.dirname, '../..');
const read = (path: string): string | undefined => {
  const full = join(repo, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined;
};
const key = (d: Doc): string => `${d.kind}/${d.metadata?.namespace ?? ''}/${d.metadata?.name}`;
const sorted = (docs: Doc[]): Doc[] => [...docs].sort((a, b) => key(a).localeCompare(key(b)));

describe('the release renderer against kubectl kustomize', () => {
  it.each(['knative', 'knative/samples', 'knative/namespace-access'])('%s', (dir) => {
    const kubectl = inject('kubectl');
    const real = parseDocuments(execFileSync(kubectl, ['kustomize', join(repo, dir)], { encoding: 'utf8', maxBuffer: 64 << 20 }), dir);
    expect(sorted(renderKustomization(dir, read))).toEqual(sorted(real));
  });
});
