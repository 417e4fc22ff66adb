// The build recipe of the local control plane, as pure functions over the pins
// in versions.json: which Go module each tool comes from, the go.mod we
// generate for it, the build flags, and each tool's cache key. No I/O here.
import { createHash } from 'node:crypto';

export interface Pins {
  readonly kubernetes: string;
  readonly etcd: string;
  readonly kwok: string;
  readonly knativeEventing: string;
  readonly containerd: string;
  readonly coredns: string;
  /** helm.sh/helm/v4: `helm lint`/`helm template` of charts/swarm (npm test) and `helm package` (npm run release). */
  readonly helm: string;
  /** github.com/zegl/kube-score: the manifest linter of npm test. */
  readonly kubeScore: string;
  /** github.com/anchore/syft: each release image's SBOM (npm run release). */
  readonly syft: string;
  /** github.com/distribution/distribution/v3: the OCI registry a release is pushed to in tests. */
  readonly distribution: string;
  /** github.com/marcosQuesada/k8s-swarm, the original operator (bench:coverage's peer): a pseudo-version. */
  readonly originalOperator: string;
  /** Its module sum (h1:…), checked against whatever source the build gets. */
  readonly originalOperatorSum: string;
  readonly goBuildFlags: readonly string[];
  readonly goLdflags: string;
}

/** A binary we build, and the Go package it comes from. */
export interface BinarySpec {
  readonly name: string;
  readonly pkg: string;
  /** Extra environment of its `go build` (e.g. CGO_ENABLED=0 for a static binary). */
  readonly env?: Readonly<Record<string, string>>;
}

/** One Go module per tool, so the dependency graphs of the tools never fight. */
export interface ToolSpec {
  readonly id: ToolId;
  readonly module: string;
  readonly version: string;
  readonly binaries: readonly BinarySpec[];
  /** Extra `-X` linker flags (version stamps the upstream build would set). */
  readonly ldflagsX: readonly string[];
  /** Go build tags (`-tags=`). */
  readonly tags?: readonly string[];
  /** The module sum (h1:…) the source must have; checked by the build whatever the source's origin. */
  readonly sum?: string;
  /**
   * Built inside the module's own tree with its own go.mod and go.sum (an
   * application module that pins old dependencies a scratch module would
   * re-resolve); binaries' `pkg` are then relative (`./cmd/x`).
   */
  readonly inOwnModule?: boolean;
}

export type ToolId = 'etcd' | 'kubernetes' | 'kwok' | 'knative' | 'containerd' | 'coredns' | 'original' | 'helm' | 'kube-score' | 'syft' | 'registry';

/** Bumped when the recipe itself changes in a way that needs a rebuild of every tool. */
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
      binaries: [
        'kube-apiserver',
        'kube-controller-manager',
        'kube-scheduler',
        'kubectl',
        'kubelet',
        'kube-proxy',
      ].map((name) => ({
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
    {
      id: 'containerd',
      module: 'github.com/containerd/containerd/v2',
      version: pins.containerd,
      binaries: [
        { name: 'containerd', pkg: 'github.com/containerd/containerd/v2/cmd/containerd' },
        { name: 'ctr', pkg: 'github.com/containerd/containerd/v2/cmd/ctr' },
        // Static, as upstream ships it: the shim outlives containerd restarts.
        {
          name: 'containerd-shim-runc-v2',
          pkg: 'github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2',
          env: { CGO_ENABLED: '0' },
        },
      ],
      ldflagsX: [`github.com/containerd/containerd/v2/version.Version=${pins.containerd}`],
      // The snapshotters we do not use need C libraries we do not have.
      tags: ['no_btrfs', 'no_zfs', 'no_devmapper'],
    },
    {
      id: 'coredns',
      module: 'github.com/coredns/coredns',
      version: pins.coredns,
      // Static: it runs in an image that holds nothing else.
      binaries: [{ name: 'coredns', pkg: 'github.com/coredns/coredns', env: { CGO_ENABLED: '0' } }],
      ldflagsX: [],
    },
    // Release and lint tools, not the cluster's: built on first use only
    // (npm test's chart and manifest checks, npm run release), each in its own
    // scratch module like the cluster's tools; version stamps as upstream's
    // Makefile or goreleaser sets them, so `--version` says what was built.
    {
      id: 'helm',
      module: 'helm.sh/helm/v4',
      version: pins.helm,
      binaries: [{ name: 'helm', pkg: 'helm.sh/helm/v4/cmd/helm', env: { CGO_ENABLED: '0' } }],
      ldflagsX: [`helm.sh/helm/v4/internal/version.version=${pins.helm}`, 'helm.sh/helm/v4/internal/version.gitTreeState=clean'],
    },
    {
      id: 'kube-score',
      module: 'github.com/zegl/kube-score',
      version: pins.kubeScore,
      binaries: [{ name: 'kube-score', pkg: 'github.com/zegl/kube-score/cmd/kube-score', env: { CGO_ENABLED: '0' } }],
      ldflagsX: [`main.version=${pins.kubeScore}`],
    },
    {
      id: 'syft',
      module: 'github.com/anchore/syft',
      version: pins.syft,
      binaries: [{ name: 'syft', pkg: 'github.com/anchore/syft/cmd/syft', env: { CGO_ENABLED: '0' } }],
      ldflagsX: [`main.version=${pins.syft}`],
    },
    {
      id: 'registry',
      module: 'github.com/distribution/distribution/v3',
      version: pins.distribution,
      binaries: [{ name: 'registry', pkg: 'github.com/distribution/distribution/v3/cmd/registry', env: { CGO_ENABLED: '0' } }],
      ldflagsX: [`github.com/distribution/distribution/v3/version.version=${pins.distribution}`],
    },
    {
      // The operator Swarm replaces, for the side-by-side benchmark (bench/coverage.ts --peer original).
      id: 'original',
      module: 'github.com/marcosQuesada/k8s-swarm',
      version: pins.originalOperator,
      sum: pins.originalOperatorSum,
      binaries: [{ name: 'k8s-swarm-controller', pkg: './services/controller' }],
      ldflagsX: [],
      inOwnModule: true,
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
  const tags = tool.tags?.length ? [`-tags=${tool.tags.join(',')}`] : [];
  return ['build', ...pins.goBuildFlags, ...tags, `-ldflags=${ldflags(pins, tool)}`, '-o', outPath, binary.pkg];
}

/**
 * Cache directory name of one tool: a hash of what its build depends on (its
 * module and version, the Go version, flags and tags, the recipe revision),
 * so bumping one pin rebuilds that tool only and adding a tool invalidates
 * nothing. The binaries are not part of the key: each one's own recipe
 * (`binaryFingerprint`) is recorded in the tool's marker, so a binary added
 * to a tool is built next to the existing ones.
 */
export function toolCacheKey(pins: Pins, tool: ToolSpec, goVersion: string): string {
  const canonical = JSON.stringify({
    recipe: RECIPE_REVISION,
    module: tool.module,
    version: tool.version,
    go: goVersion,
    goBuildFlags: pins.goBuildFlags,
    ldflags: ldflags(pins, tool),
    tags: tool.tags ?? [],
    // Absent (so no other key changes) for tools that pin no sum.
    sum: tool.sum,
  });
  return `${tool.id}-${tool.version}-${createHash('sha256').update(canonical).digest('hex').slice(0, 12)}`;
}

/** What, beyond its tool's key, one binary's build depends on. */
export function binaryFingerprint(binary: BinarySpec): string {
  return JSON.stringify({ pkg: binary.pkg, env: binary.env ?? {} });
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
