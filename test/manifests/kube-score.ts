// kube-score (github.com/zegl/kube-score, built from its pinned Go module) over
// the sample worker pools (knative/samples as kustomize renders it, and the
// Deployment pool sample) and the chart's rendering. Every finding fails the
// check unless its check is one docs/release.md justifies (JUSTIFIED); the
// Knative Services are not kube-score's kinds (it skips them).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { renderKustomization } from '../../dev/release/kustomize.js';

const repo = resolve(import.meta.dirname, '../..');

/** Checks left standing on purpose, each argued in docs/release.md ("kube-score"). */
export const JUSTIFIED: Readonly<Record<string, string>> = {
  'pod-networkpolicy': 'network policy is the namespace owner’s; a worker takes only probes and /assignment reads, and calls the API server, whose address no portable policy names',
  'container-security-context-user-group-id': 'uid/gid 1000 is the image’s own user (the node image’s); non-root, no privilege, read-only root; a cluster that maps users to a range sets its own',
  'container-image-pull-policy': 'images are pinned by digest: IfNotPresent pulls exactly that image once; Always would make every pod start depend on the registry',
};

interface Scored {
  object_name: string;
  checks: { check: { id: string; name: string }; grade: number; skipped: boolean; comments: { summary: string }[] | null }[];
}

type Tool = (label: string, command: string, args: readonly string[]) => string | undefined;

function readTree(path: string): string | undefined {
  try {
    return readFileSync(join(repo, path), 'utf8');
  } catch {
    return undefined;
  }
}

/** The findings of kube-score over the samples and `chartRendering`, as passed and failed check lines. */
export function kubeScoreFindings(kubeScore: string, tool: Tool, chartRendering: string | undefined): { ok: string[]; failed: [string, string][] } {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-kube-score-'));
  try {
    const inputs: [string, string][] = [
      ['knative/samples (kustomize)', renderKustomization('knative/samples', readTree).map((d) => `---\n${stringify(d)}`).join('')],
      ['knative/samples/deployment.yaml', readTree('knative/samples/deployment.yaml') ?? ''],
      ...(chartRendering !== undefined ? [['charts/swarm (helm template)', chartRendering] as [string, string]] : []),
    ];
    const ok: string[] = [];
    const failed: [string, string][] = [];
    inputs.forEach(([label, text], i) => {
      const file = join(dir, `${i}.yaml`);
      writeFileSync(file, text);
      // Exit 1 means critical findings, which are judged below; only unreadable output fails here.
      const out = tool(`kube-score ${label}`, 'sh', ['-c', `"$0" score --kubernetes-version v1.30 --output-format json "$1"; test $? -le 1`, kubeScore, file]);
      if (out === undefined) return;
      const scored = JSON.parse(out) as Scored[];
      const findings = scored.flatMap((o) =>
        o.checks.filter((c) => !c.skipped && c.grade < 10).map((c) => ({ id: c.check.id, line: `${o.object_name}: ${c.check.name} (${c.check.id}): ${(c.comments ?? []).map((m) => m.summary).join('; ')}` })),
      );
      const unjustified = findings.filter((f) => !JUSTIFIED[f.id]);
      const standing = [...new Set(findings.filter((f) => JUSTIFIED[f.id]).map((f) => f.id))].sort();
      if (unjustified.length === 0) ok.push(`kube-score ${label}: ${scored.length} objects, no finding but ${standing.length ? standing.join(', ') : 'none'} (justified in docs/release.md)`);
      else failed.push([`kube-score ${label}`, unjustified.map((f) => f.line).join('\n')]);
    });
    const docs = readTree('docs/release.md') ?? '';
    const unargued = Object.keys(JUSTIFIED).filter((id) => !docs.includes(`\`${id}\``));
    if (unargued.length) failed.push(['docs/release.md', `does not justify ${unargued.join(', ')}`]);
    else ok.push(`docs/release.md justifies each finding left standing (${Object.keys(JUSTIFIED).length})`);
    return { ok, failed };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
