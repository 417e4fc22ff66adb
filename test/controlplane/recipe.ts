// The build recipe of the local control plane, as pure functions over the pins
// in versions.json: which Go module each tool comes from, the go.mod we
// generate for it, the linker flags, and the cache key. No I/O here.
import { createHash } from 'node:crypto';

export interface Pins {
  readonly kubernetes: string;
  readonly etcd: string;
  readonly kwok: string;
  readonly knativeEventing: string;
  readonly goBuildFlags: readonly string[];
  readonly goLdflags: string;
}

/** A binary we build, and the Go package it comes from. */
export interface BinarySpec {
  readonly name: string;
  readonly pkg: string;
}

/** One Go module per tool, so the dependency graphs of the tools never fight. */
export interface ToolSpec {
  readonly id: ToolId;
  readonly module: string;
  readonly version: string;
  readonly binaries: readonly BinarySpec[];
  /** Extra `-X` linker flags (version stamps the upstream build would set). */
  readonly ldflagsX: readonly string[];
}

export type ToolId = 'etcd' | 'kubernetes' | 'kwok' | 'knative';

/** Bumped when the recipe itself changes in a way that needs a rebuild. */
export const RECIPE_REVISION = 1;

export function toolSpecs(pins: Pins): readonly ToolSpec[] {
  const k8s = parseSemver(pins.kubernetes);
  const versionStamps = (pkg: string): string[] => [
    `${pkg}.gitVersion=${pins.kubernetes}`,
    `${pkg}.gitMajor=${k8s.major}`,
    `${pkg}.gitMinor=${k8s.minor}`,
    `${pkg}.gitTreeState=clean`,
  ];
  return [
    {
      id: 'etcd',
      module: 'go.etcd.io/etcd/server/v3',
      version: pins.etcd,
      binaries: [{ name: 'etcd', pkg: 'go.etcd.io/etcd/server/v3' }],
      ldflagsX: [],
    },
    {
      id: 'kubernetes',
      module: 'k8s.io/kubernetes',
      version: pins.kubernetes,
      binaries: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'].map((name) => ({
        name,
        pkg: `k8s.io/kubernetes/cmd/${name}`,
      })),
      // Without these the binaries report v0.0.0-master, which kubectl and
      // clients treat as a version skew.
      ldflagsX: [...versionStamps('k8s.io/component-base/version'), ...versionStamps('k8s.io/client-go/pkg/version')],
    },
    {
      id: 'kwok',
      module: 'sigs.k8s.io/kwok',
      version: pins.kwok,
      binaries: [{ name: 'kwok', pkg: 'sigs.k8s.io/kwok/cmd/kwok' }],
      ldflagsX: [],
    },
    {
      id: 'knative',
      module: 'knative.dev/eventing',
      version: pins.knativeEventing,
      binaries: [{ name: 'apiserver_receive_adapter', pkg: 'knative.dev/eventing/cmd/apiserver_receive_adapter' }],
      ldflagsX: [],
    },
  ];
}

export function parseSemver(version: string): { major: number; minor: number; patch: number } {
  const match = /^v(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (!match) throw new Error(`not a release version: ${version}`);
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

/**
 * k8s.io/kubernetes v1.X.Y publishes its staging modules (k8s.io/api,
 * k8s.io/client-go, ...) as v0.X.Y.
 */
export function stagingVersion(kubernetesVersion: string): string {
  const { minor, patch } = parseSemver(kubernetesVersion);
  return `v0.${minor}.${patch}`;
}

export interface GoModReplace {
  readonly from: string;
  /** Either a module path (with `toVersion`) or a local directory (`./...`). */
  readonly to: string;
  readonly toVersion?: string;
}

export interface UpstreamGoMod {
  readonly goVersion: string;
  readonly godebug: readonly string[];
  readonly replaces: readonly GoModReplace[];
}

/** Reads the parts of an upstream go.mod that a module depending on it must repeat. */
export function parseGoMod(text: string): UpstreamGoMod {
  const lines = text.split('\n').map((line) => line.replace(/\/\/.*$/, '').trim());
  let goVersion = '';
  const godebug: string[] = [];
  const replaces: GoModReplace[] = [];
  let block: string | undefined;
  for (const line of lines) {
    if (line === '') continue;
    if (block) {
      if (line === ')') {
        block = undefined;
        continue;
      }
      if (block === 'replace') replaces.push(parseReplace(line));
      if (block === 'godebug') godebug.push(line);
      continue;
    }
    const blockStart = /^(\w+)\s*\($/.exec(line);
    if (blockStart) {
      block = blockStart[1];
      continue;
    }
    const [keyword, ...rest] = line.split(/\s+/);
    if (keyword === 'go') goVersion = rest[0] ?? '';
    if (keyword === 'godebug') godebug.push(rest.join(' '));
    if (keyword === 'replace') replaces.push(parseReplace(rest.join(' ')));
  }
  if (!goVersion) throw new Error('go.mod has no go directive');
  return { goVersion, godebug, replaces };
}

function parseReplace(spec: string): GoModReplace {
  const [left, right] = spec.split('=>').map((side) => side.trim().split(/\s+/));
  const from = left?.[0];
  const to = right?.[0];
  if (!from || !to) throw new Error(`cannot parse replace directive: ${spec}`);
  return right?.[1] ? { from, to, toVersion: right[1] } : { from, to };
}

/**
 * Replace directives of a dependency are ignored by Go, so a module that
 * builds it must repeat the ones that matter. k8s.io/kubernetes requires its
 * staging modules at v0.0.0 and points them at ./staging/src/<module>: those
 * become the published staging module at the matching v0 version. Other
 * local replaces (etcd's `../api` siblings) only serve upstream's own
 * development, its require lines already name published versions, so they
 * are dropped, as Go itself does for a dependency.
 */
export function inheritedReplaces(upstream: UpstreamGoMod, upstreamVersion: string): GoModReplace[] {
  const inherited: GoModReplace[] = [];
  for (const replace of upstream.replaces) {
    if (!replace.to.startsWith('.')) {
      inherited.push(replace);
      continue;
    }
    const stagingMatch = /(?:^|\/)staging\/src\/(.+)$/.exec(replace.to);
    if (stagingMatch && stagingMatch[1] === replace.from) {
      inherited.push({ from: replace.from, to: replace.from, toVersion: stagingVersion(upstreamVersion) });
    }
  }
  return inherited;
}

/** The go.mod of the scratch module that builds one tool. */
export function renderToolGoMod(tool: ToolSpec, upstream: UpstreamGoMod): string {
  const replaces = inheritedReplaces(upstream, tool.version);
  const out = [
    `// Generated by test/controlplane from versions.json; do not edit.`,
    `module swarm.local/controlplane/${tool.id}`,
    '',
    `go ${upstream.goVersion}`,
    '',
  ];
  for (const setting of upstream.godebug) out.push(`godebug ${setting}`);
  out.push(`require ${tool.module} ${tool.version}`, '');
  if (replaces.length > 0) {
    out.push('replace (');
    for (const r of replaces) out.push(`\t${r.from} => ${r.to}${r.toVersion ? ` ${r.toVersion}` : ''}`);
    out.push(')', '');
  }
  out.push('tool (');
  for (const binary of tool.binaries) out.push(`\t${binary.pkg}`);
  out.push(')', '');
  return out.join('\n');
}

export function ldflags(pins: Pins, tool: ToolSpec): string {
  return [pins.goLdflags, ...tool.ldflagsX.map((x) => `-X ${x}`)].filter((part) => part !== '').join(' ');
}

/** The argv of `go` that builds one binary into `outPath`. */
export function goBuildArgs(pins: Pins, tool: ToolSpec, binary: BinarySpec, outPath: string): string[] {
  return ['build', ...pins.goBuildFlags, `-ldflags=${ldflags(pins, tool)}`, '-o', outPath, binary.pkg];
}

/** Cache directory name: a hash of the pins and the recipe, so a bump is a rebuild. */
export function cacheKey(pins: Pins): string {
  const canonical = JSON.stringify({
    recipe: RECIPE_REVISION,
    kubernetes: pins.kubernetes,
    etcd: pins.etcd,
    kwok: pins.kwok,
    knativeEventing: pins.knativeEventing,
    goBuildFlags: pins.goBuildFlags,
    goLdflags: pins.goLdflags,
  });
  return `cp-${createHash('sha256').update(canonical).digest('hex').slice(0, 12)}`;
}

/** Where, inside the kwok module, its Stage definitions live (copied to the cache). */
export const KWOK_STAGE_ROOT = 'kustomize/stage';

/**
 * The KWOK stages a cluster runs (paths under KWOK_STAGE_ROOT): nodes become
 * Ready and keep heartbeating; pods become Running and Ready, and a deleted
 * pod goes at once. The "fast" pod stages, not the "general" ones: those
 * wait out each pod's termination grace period (30 s by default) before
 * removing it, which would make every restart in a test take half a minute.
 */
export const KWOK_STAGE_FILES: readonly string[] = [
  'node/fast/node-initialize.yaml',
  'node/heartbeat/node-heartbeat.yaml',
  'pod/fast/pod-ready.yaml',
  'pod/fast/pod-complete.yaml',
  'pod/fast/pod-delete.yaml',
];
