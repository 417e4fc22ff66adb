// `npm run test:manifests`: the chart and the manifests as a reviewer's tools
// see them. helm and kube-score (built from their pinned Go modules into the
// swarm cache on first use, with progress): helm lints charts/swarm and
// renders it with the defaults and with every value set (the renderings must
// parse, name every image, select the watched namespaces); kube-score scores
// the sample pools and the chart's rendering (kube-score.ts). npm test runs it
// beside the unit tier.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ensureBuilt } from '../controlplane/build.js';
import { imagesOf, type Doc } from '../../dev/release/kustomize.js';
import { kubeScoreFindings } from './kube-score.js';

const repo = resolve(import.meta.dirname, '../..');
const CHART = resolve(repo, 'charts/swarm');
let failures = 0;
let passes = 0;
const say = (line: string): void => void process.stdout.write(`test:manifests: ${line}\n`);
const ok = (label: string): void => (passes++, say(`ok   ${label}`));
const fail = (label: string, detail: string): void => (failures++, say(`FAIL ${label}\n${detail}`));

/** Runs a tool; its stdout, or undefined after reporting the failure. */
function tool(label: string, command: string, args: readonly string[]): string | undefined {
  const result = spawnSync(command, args, { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status === 0) return result.stdout;
  fail(label, `${command} ${args.join(' ')}: ${result.error?.message ?? ''}\n${result.stdout}${result.stderr}`.trim());
  return undefined;
}

const parse = (text: string): Doc[] => parseAllDocuments(text).map((d) => d.toJS() as Doc).filter((d) => d !== null);
const digest = `sha256:${'0'.repeat(64)}`;
const EVERY_VALUE = [
  '--set', 'watchNamespaces={team-a,team-b}',
  '--set', 'image.registry=registry.example.com/swarm',
  '--set', `image.digests.functions=${digest}`,
  '--set', `image.digests.eventDisplay=${digest}`,
  '--set', 'logLevel=debug',
  '--set', 'tracing.endpoint=http://otel-collector.observability:4318',
  '--set', 'resync.schedule=*/5 * * * *',
  '--set', 'resources.assign.limits.memory=512Mi',
];

const tools = await ensureBuilt((line) => process.stderr.write(`[tools] ${line}\n`), ['helm', 'kube-score']);
const helm = tools.helm!;

if (tool('helm lint --strict charts/swarm', helm, ['lint', '--strict', CHART]) !== undefined) ok('helm lint --strict charts/swarm');
if (tool('helm lint with every value set', helm, ['lint', '--strict', CHART, ...EVERY_VALUE]) !== undefined) ok('helm lint --strict with every value set');

const defaults = tool('helm template (defaults)', helm, ['template', 'swarm', CHART, '-n', 'swarm-system']);
if (defaults !== undefined) {
  const docs = parse(defaults);
  const images = imagesOf(docs);
  if (docs.length > 20 && images.length >= 4 && images.every((i) => i.startsWith('ghcr.io/k8slab/'))) ok(`helm template (defaults): ${docs.length} objects, images ${[...new Set(images)].join(', ')}`);
  else fail('helm template (defaults)', `${docs.length} objects, images ${images.join(', ')}`);
}

const every = tool('helm template (every value set)', helm, ['template', 'swarm', CHART, '-n', 'swarm-system', ...EVERY_VALUE]);
if (every !== undefined) {
  const docs = parse(every);
  const images = [...new Set(imagesOf(docs))];
  const bindings = docs.filter((d) => d.kind === 'RoleBinding').map((d) => d.metadata?.namespace);
  const pings = docs.filter((d) => d.kind === 'PingSource').map((d) => `${d.metadata?.name} ${(d.spec as { schedule: string }).schedule}`);
  const env = JSON.stringify(docs.filter((d) => d.kind === 'Service'));
  const wrong = [
    images.every((i) => /^registry\.example\.com\/swarm\/(swarm|event-display)@sha256:0{64}$/.test(i)) ? '' : `images ${images.join(', ')}`,
    bindings.sort().join() === 'team-a,team-a,team-a,team-b,team-b,team-b' ? '' : `RoleBindings in ${bindings.join(', ')}`,
    pings.sort().join() === 'swarm-resync-team-a */5 * * * *,swarm-resync-team-b */5 * * * *' ? '' : `PingSources ${pings.join(', ')}`,
    env.includes('"OTEL_EXPORTER_OTLP_ENDPOINT","value":"http://otel-collector.observability:4318"') && env.includes('"LOG_LEVEL","value":"debug"') ? '' : 'tracing or log level env missing',
    env.includes('"memory":"512Mi"') ? '' : 'resources.assign not applied',
  ].filter(Boolean);
  if (wrong.length === 0) ok('helm template (every value set): images by digest, bindings and resync per watched namespace, tracing, log level, resources');
  else fail('helm template (every value set)', wrong.join('\n'));
}

const invalid = spawnSync(helm, ['template', 'swarm', CHART, '--set', 'logLevel=loud'], { encoding: 'utf8' });
if (invalid.status !== 0 && /logLevel/.test(invalid.stderr)) ok('values.schema.json refuses logLevel=loud');
else fail('values.schema.json', `logLevel=loud was not refused: ${invalid.stderr}`);

const scored = kubeScoreFindings(tools['kube-score']!, tool, defaults);
for (const line of scored.ok) ok(line);
for (const [label, detail] of scored.failed) fail(label, detail);

// The integration tier's release-push test needs the registry: built here, in
// parallel with the cluster's cold build, rather than on that tier's critical path.
await ensureBuilt((line) => process.stderr.write(`[tools] ${line}\n`), ['registry']);

say(`${passes} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
