import { describe, expect, it } from 'vitest';
import type { Pins } from '../../controlplane/recipe.js';
import {
  binaryFingerprint,
  goBuildArgs,
  inheritedReplaces,
  parseGoMod,
  renderToolGoMod,
  stagingVersion,
  toolCacheKey,
  toolSpecs,
} from '../../controlplane/recipe.js';

const pins: Pins = {
  kubernetes: 'v1.36.4',
  etcd: 'v3.6.16',
  kwok: 'v0.8.0',
  knativeEventing: 'v0.47.0',
  containerd: 'v2.4.2',
  coredns: 'v1.15.0',
  helm: 'v4.3.1',
  kubeScore: 'v1.20.0',
  syft: 'v1.57.1',
  distribution: 'v3.1.2',
  originalOperator: 'v0.0.0-20220323221928-c2045be700b4',
  originalOperatorSum: 'h1:yv8tF+wXlxaoB2FLZWTRUPjc8RU8SV9pwOWpMtxu06Q=',
  goBuildFlags: ['-trimpath'],
  goLdflags: '-s -w',
};

const kubernetesGoMod = `// This is a generated file. Do not edit directly.
module k8s.io/kubernetes

go 1.26.0

godebug default=go1.26

require (
	github.com/spf13/cobra v1.10.0
	k8s.io/api v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go // staging
)

replace github.com/example/forked => github.com/example/fork v1.2.3
`;

function tool(id: string) {
  const found = toolSpecs(pins).find((t) => t.id === id);
  if (!found) throw new Error(`no tool ${id}`);
  return found;
}

describe('control plane build recipe', () => {
  it('reads go directive, godebug settings and replace directives of an upstream go.mod', () => {
    const parsed = parseGoMod(kubernetesGoMod);
    expect(parsed.goVersion).toBe('1.26.0');
    expect(parsed.godebug).toEqual(['default=go1.26']);
    expect(parsed.replaces).toEqual([
      { from: 'k8s.io/api', to: './staging/src/k8s.io/api' },
      { from: 'k8s.io/client-go', to: './staging/src/k8s.io/client-go' },
      { from: 'github.com/example/forked', to: 'github.com/example/fork', toVersion: 'v1.2.3' },
    ]);
  });

  it('maps kubernetes v1.X.Y to staging modules v0.X.Y', () => {
    expect(stagingVersion('v1.36.4')).toBe('v0.36.4');
    expect(stagingVersion('v1.35.10')).toBe('v0.35.10');
    expect(() => stagingVersion('v1.36')).toThrow();
  });

  it('turns local staging replaces into published modules and keeps module replaces', () => {
    const replaces = inheritedReplaces(parseGoMod(kubernetesGoMod), 'v1.36.4');
    expect(replaces).toEqual([
      { from: 'k8s.io/api', to: 'k8s.io/api', toVersion: 'v0.36.4' },
      { from: 'k8s.io/client-go', to: 'k8s.io/client-go', toVersion: 'v0.36.4' },
      { from: 'github.com/example/forked', to: 'github.com/example/fork', toVersion: 'v1.2.3' },
    ]);
  });

  it('drops sibling-directory replaces, whose require lines already name published versions', () => {
    const upstream = parseGoMod('module go.etcd.io/etcd/server/v3\n\ngo 1.26\n\nreplace go.etcd.io/etcd/api/v3 => ../api\n');
    expect(inheritedReplaces(upstream, 'v3.6.16')).toEqual([]);
  });

  it('renders a scratch go.mod that requires the pinned module and lists its binaries as tools', () => {
    const goMod = renderToolGoMod(tool('kubernetes'), parseGoMod(kubernetesGoMod));
    expect(goMod).toContain('module swarm.local/controlplane/kubernetes');
    expect(goMod).toContain('go 1.26.0');
    expect(goMod).toContain('godebug default=go1.26');
    expect(goMod).toContain('require k8s.io/kubernetes v1.36.4');
    expect(goMod).toContain('\tk8s.io/client-go => k8s.io/client-go v0.36.4');
    expect(goMod).toContain('\tk8s.io/kubernetes/cmd/kube-apiserver');
    expect(goMod).toContain('\tk8s.io/kubernetes/cmd/kubectl');
  });

  it('has no replace block for a module without replaces', () => {
    const goMod = renderToolGoMod(tool('etcd'), parseGoMod('module go.etcd.io/etcd/server/v3\n\ngo 1.26.0\n'));
    expect(goMod).not.toContain('replace');
    expect(goMod).toContain('require go.etcd.io/etcd/server/v3 v3.6.16');
  });

  it('builds stripped, path-trimmed binaries with the kubernetes version stamped in', () => {
    const args = goBuildArgs(pins, tool('kubernetes'), { name: 'kubectl', pkg: 'k8s.io/kubernetes/cmd/kubectl' }, '/out/kubectl');
    expect(args.slice(0, 2)).toEqual(['build', '-trimpath']);
    const ldflags = args.find((a) => a.startsWith('-ldflags='));
    expect(ldflags).toContain('-s -w');
    expect(ldflags).toContain('-X k8s.io/component-base/version.gitVersion=v1.36.4');
    expect(ldflags).toContain('-X k8s.io/component-base/version.gitMinor=36');
    expect(args.slice(-3)).toEqual(['-o', '/out/kubectl', 'k8s.io/kubernetes/cmd/kubectl']);
  });

  it('keys each tool by its own pin, the Go version and the flags, so bumping or adding a pin rebuilds that tool only', () => {
    const key = (p: Pins, id: string, go = 'go1.26.8') => toolCacheKey(p, toolSpecs(p).find((t) => t.id === id)!, go);
    const ids = ['etcd', 'kubernetes', 'kwok', 'knative', 'containerd', 'coredns'];
    for (const id of ids) expect(key(pins, id)).toMatch(new RegExp(`^${id}-v[0-9.]+-[0-9a-f]{12}$`));
    expect(new Set(ids.map((id) => key(pins, id))).size).toBe(ids.length);
    expect(key({ ...pins }, 'etcd')).toBe(key(pins, 'etcd'));
    // A bump rebuilds its own tool and no other.
    const bumped = { ...pins, kubernetes: 'v1.36.3' };
    expect(key(bumped, 'kubernetes')).not.toBe(key(pins, 'kubernetes'));
    for (const id of ['etcd', 'kwok', 'knative', 'containerd', 'coredns']) expect(key(bumped, id)).toBe(key(pins, id));
    expect(key({ ...pins, containerd: 'v2.4.1' }, 'etcd')).toBe(key(pins, 'etcd'));
    // Toolchain and flags touch every tool.
    expect(key(pins, 'etcd', 'go1.26.9')).not.toBe(key(pins, 'etcd'));
    expect(key({ ...pins, goLdflags: '' }, 'etcd')).not.toBe(key(pins, 'etcd'));
    expect(key({ ...pins, goBuildFlags: [] }, 'coredns')).not.toBe(key(pins, 'coredns'));
  });

  it('does not key a tool by its binaries: an added binary is built next to the cached ones', () => {
    const kubernetes = tool('kubernetes');
    const fewer = { ...kubernetes, binaries: kubernetes.binaries.slice(0, 4) };
    expect(toolCacheKey(pins, fewer, 'go1.26.8')).toBe(toolCacheKey(pins, kubernetes, 'go1.26.8'));
    expect(kubernetes.binaries.map((b) => b.name)).toEqual(expect.arrayContaining(['kubelet', 'kube-proxy']));
  });

  it('builds the original operator in its own module, keyed by its pinned sum as well', () => {
    const original = tool('original');
    expect(original.inOwnModule).toBe(true);
    expect(goBuildArgs(pins, original, original.binaries[0]!, '/out/c').slice(-3)).toEqual(['-o', '/out/c', './services/controller']);
    const key = (p: Pins, id: string) => toolCacheKey(p, toolSpecs(p).find((t) => t.id === id)!, 'go1.26.8');
    expect(key({ ...pins, originalOperatorSum: 'h1:other' }, 'original')).not.toBe(key(pins, 'original'));
    expect(key({ ...pins, originalOperatorSum: 'h1:other' }, 'etcd')).toBe(key(pins, 'etcd'));
  });

  it('builds containerd with the unused snapshotters tagged out, and the shim and CoreDNS static', () => {
    const containerd = tool('containerd');
    const shim = containerd.binaries.find((b) => b.name === 'containerd-shim-runc-v2')!;
    expect(goBuildArgs(pins, containerd, shim, '/out/shim')).toContain('-tags=no_btrfs,no_zfs,no_devmapper');
    expect(shim.env).toEqual({ CGO_ENABLED: '0' });
    expect(containerd.binaries.map((b) => b.name)).toEqual(['containerd', 'ctr', 'containerd-shim-runc-v2']);
    expect(tool('coredns').binaries[0]?.env).toEqual({ CGO_ENABLED: '0' });
    expect(binaryFingerprint(shim)).not.toBe(binaryFingerprint({ ...shim, env: {} }));
  });
});
