import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ComponentInputs, NodeInputs } from '../../controlplane/components.js';
import { fakeNode, layout, nodeSchedulable, renderKubeconfig, startStages } from '../../controlplane/components.js';
import { CLIENT_IDENTITIES, subject } from '../../controlplane/pki.js';

const inputs: ComponentInputs = {
  ports: {
    etcdClient: 20001,
    etcdPeer: 20002,
    apiserver: 20003,
    controllerManager: 20004,
    scheduler: 20005,
    kwok: 20006,
    kubeletHealthz: 20007,
    kubeProxyHealthz: 20008,
    kubeProxyMetrics: 20009,
  },
  layout: layout('/work/.swarm'),
  bin: (name) => `/cache/bin/${name}`,
  kwokStageFiles: ['/cache/kwok-stages/pod-ready.yaml', '/cache/kwok-stages/node-initialize.yaml'],
  pki: {
    caCert: '/pki/ca.crt',
    caKey: '/pki/ca.key',
    servingCert: '/pki/apiserver.crt',
    servingKey: '/pki/apiserver.key',
    serviceAccountKey: '/pki/sa.key',
    serviceAccountPub: '/pki/sa.pub',
    kubeletServing: { cert: '/pki/kubelet-serving.crt', key: '/pki/kubelet-serving.key' },
  },
  kubeconfigs: { controllerManager: '/kc/kcm', scheduler: '/kc/sched', kwok: '/kc/admin' },
  apiServerHost: '127.0.0.1',
};

const node: NodeInputs = {
  nodeName: 'vm',
  nodeIp: '10.244.0.1',
  kubeletPort: 10250,
  containerdConfig: '/run/n/containerd.toml',
  containerdSocket: '/run/n/containerd.sock',
  kubeletConfig: '/run/n/kubelet.yaml',
  kubeletRoot: '/var/lib/n/kubelet',
  kubeProxyConfig: '/run/n/kube-proxy.yaml',
  kubeletKubeconfig: '/kc/kubelet',
  kubeletClient: { cert: '/pki/apiserver-kubelet-client.crt', key: '/pki/apiserver-kubelet-client.key' },
  labels: { 'swarm.local/real-node': 'true' },
};
const withNode: ComponentInputs = { ...inputs, apiServerHost: '10.244.0.1', node };

const specs = startStages(inputs).flat();
const spec = (name: string) => {
  const found = specs.find((s) => s.name === name);
  if (!found) throw new Error(`no component ${name}`);
  return found;
};

describe('local cluster components', () => {
  it('starts etcd, then the API server, then controllers, scheduler and kwok', () => {
    expect(startStages(inputs).map((stage) => stage.map((s) => s.name))).toEqual([
      ['etcd'],
      ['kube-apiserver'],
      ['kube-controller-manager', 'kube-scheduler', 'kwok'],
    ]);
  });

  it('listens on loopback only', () => {
    for (const s of specs) {
      for (const arg of s.args) {
        const value = arg.split('=').slice(1).join('=');
        const hosts = [...value.matchAll(/(?:^|\/\/)(\d+\.\d+\.\d+\.\d+):\d+/g)].map((m) => m[1]);
        for (const host of hosts) expect(host, `${s.name} ${arg}`).toBe('127.0.0.1');
        if (/^--(bind|advertise)-address=/.test(arg)) expect(value).toBe('127.0.0.1');
      }
      if (s.health.kind !== 'unix') expect(new URL(s.health.url).hostname).toBe('127.0.0.1');
    }
  });

  it('with a real node: starts containerd next to the controllers, then the kubelet and kube-proxy', () => {
    expect(startStages(withNode).map((stage) => stage.map((s) => s.name))).toEqual([
      ['etcd'],
      ['kube-apiserver'],
      ['kube-controller-manager', 'kube-scheduler', 'kwok', 'containerd'],
      ['kubelet', 'kube-proxy'],
    ]);
  });

  it('with a real node: the API server listens on the bridge (pods reach it) and calls kubelets with its own identity', () => {
    const args = startStages(withNode).flat().find((s) => s.name === 'kube-apiserver')!.args;
    expect(args).toContain('--bind-address=10.244.0.1');
    expect(args).toContain('--advertise-address=10.244.0.1');
    // The `kubernetes` Service gets its endpoint.
    expect(args.some((a) => a.startsWith('--endpoint-reconciler-type'))).toBe(false);
    expect(args).toContain('--kubelet-client-certificate=/pki/apiserver-kubelet-client.crt');
    expect(args).toContain('--kubelet-certificate-authority=/pki/ca.crt');
    expect(args).toContain('--kubelet-preferred-address-types=InternalIP');
    const kubelet = startStages(withNode).flat().find((s) => s.name === 'kubelet')!.args;
    expect(kubelet).toEqual(expect.arrayContaining(['--node-ip=10.244.0.1', '--hostname-override=vm', '--node-labels=swarm.local/real-node=true']));
  });

  it('runs the API server with RBAC and Node authorization and service-account tokens', () => {
    const args = spec('kube-apiserver').args;
    expect(args).toContain('--authorization-mode=RBAC,Node');
    expect(args).toContain('--secure-port=20003');
    expect(args).toContain('--etcd-servers=http://127.0.0.1:20001');
    expect(args).toContain('--service-account-signing-key-file=/pki/sa.key');
    expect(args).toContain('--service-account-key-file=/pki/sa.pub');
    expect(args).toContain('--client-ca-file=/pki/ca.crt');
  });

  it('runs every controller under its own service account', () => {
    const args = spec('kube-controller-manager').args;
    expect(args).toContain('--use-service-account-credentials=true');
    expect(args).toContain('--service-account-private-key-file=/pki/sa.key');
    expect(args).toContain('--kubeconfig=/kc/kcm');
  });

  it('has kwok manage only annotated fake nodes, with the pinned stages', () => {
    const args = spec('kwok').args;
    expect(args).toContain('--manage-all-nodes=false');
    expect(args).toContain('--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake');
    expect(args).toContain('--config=/cache/kwok-stages/pod-ready.yaml');
    expect(args).toContain('--config=/cache/kwok-stages/node-initialize.yaml');
  });

  it('creates fake nodes kwok will manage, tainted so only pods that ask for them land there', () => {
    const fake = fakeNode(1) as {
      metadata: { name: string; annotations: Record<string, string>; labels: Record<string, string> };
      spec: { taints: { key: string; value: string; effect: string }[] };
    };
    expect(fake.metadata.name).toBe('kwok-node-1');
    expect(fake.metadata.annotations['kwok.x-k8s.io/node']).toBe('fake');
    expect(fake.metadata.labels.type).toBe('kwok');
    expect(fake.spec.taints).toEqual([{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }]);
    expect(nodeSchedulable({ ...fake, status: { conditions: [{ type: 'Ready', status: 'True' }] } })).toBe(true);
  });

  it('calls a node schedulable once Ready and free of not-ready taints', () => {
    const ready = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    expect(nodeSchedulable(ready)).toBe(true);
    expect(nodeSchedulable({ status: { conditions: [{ type: 'Ready', status: 'False' }] } })).toBe(false);
    expect(nodeSchedulable({})).toBe(false);
    expect(
      nodeSchedulable({ ...ready, spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] } }),
    ).toBe(false);
  });

  it('renders a self-contained kubeconfig', () => {
    const config = parse(
      renderKubeconfig({ server: 'https://127.0.0.1:20003', user: 'swarm-admin', caData: 'Q0E=', certData: 'Q0VSVA==', keyData: 'S0VZ' }),
    );
    expect(config['current-context']).toBe('swarm-local');
    expect(config.clusters[0].cluster).toEqual({ server: 'https://127.0.0.1:20003', 'certificate-authority-data': 'Q0E=' });
    expect(config.users[0]).toEqual({
      name: 'swarm-admin',
      user: { 'client-certificate-data': 'Q0VSVA==', 'client-key-data': 'S0VZ' },
    });
  });

  it('puts admins in system:masters and names controllers as RBAC expects', () => {
    expect(subject(CLIENT_IDENTITIES.admin)).toBe('/O=system:masters/CN=swarm-admin');
    expect(subject(CLIENT_IDENTITIES.controllerManager)).toBe('/CN=system:kube-controller-manager');
    expect(subject(CLIENT_IDENTITIES.scheduler)).toBe('/CN=system:kube-scheduler');
  });
});
