// What a local cluster runs, as plain data: the on-disk layout, the command
// line of each component (the control plane, KWOK, and the real node's
// containerd, kubelet and kube-proxy), how to probe its health, the
// kubeconfigs, and the fake KWOK nodes. Pure functions; cluster.ts executes them.
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Pki } from './pki.js';

export interface Ports {
  readonly etcdClient: number;
  readonly etcdPeer: number;
  readonly apiserver: number;
  readonly controllerManager: number;
  readonly scheduler: number;
  readonly kwok: number;
  readonly kubeletHealthz: number;
  readonly kubeProxyHealthz: number;
  readonly kubeProxyMetrics: number;
}

export const PORT_NAMES: readonly (keyof Ports)[] = [
  'etcdClient',
  'etcdPeer',
  'apiserver',
  'controllerManager',
  'scheduler',
  'kwok',
  'kubeletHealthz',
  'kubeProxyHealthz',
  'kubeProxyMetrics',
];

/** Where a cluster keeps its files; everything lives under `workDir`. */
export interface Layout {
  readonly workDir: string;
  readonly stateFile: string;
  readonly kubeconfig: string;
  readonly logDir: string;
  readonly dataDir: string;
  readonly pkiDir: string;
  readonly etcdDir: string;
}

export function layout(workDir: string): Layout {
  const dataDir = join(workDir, 'cluster');
  return {
    workDir,
    stateFile: join(workDir, 'cluster.json'),
    kubeconfig: join(workDir, 'kubeconfig'),
    logDir: join(workDir, 'logs'),
    dataDir,
    pkiDir: join(dataDir, 'pki'),
    etcdDir: join(dataDir, 'etcd'),
  };
}

/** Inputs of the command lines: where binaries, certificates and kubeconfigs are. */
export interface ComponentInputs {
  readonly ports: Ports;
  readonly layout: Layout;
  readonly bin: (name: string) => string;
  readonly kwokStageFiles: readonly string[];
  readonly pki: Omit<Pki, 'dir' | 'cert'>;
  /** Kubeconfig file per component identity. */
  readonly kubeconfigs: { readonly controllerManager: string; readonly scheduler: string; readonly kwok: string };
  /** Where the API server listens: loopback, or the real node's bridge address (reachable from pods). */
  readonly apiServerHost: string;
  /** The real node's inputs, when the cluster has one. */
  readonly node?: NodeInputs;
}

export interface NodeInputs {
  readonly nodeName: string;
  readonly nodeIp: string;
  readonly kubeletPort: number;
  readonly containerdConfig: string;
  readonly containerdSocket: string;
  readonly kubeletConfig: string;
  readonly kubeletRoot: string;
  readonly kubeProxyConfig: string;
  readonly kubeletKubeconfig: string;
  /** The API server's client certificate towards the kubelet (logs, exec, port-forward). */
  readonly kubeletClient: { readonly cert: string; readonly key: string };
  /** Labels the kubelet registers its node with. */
  readonly labels: Readonly<Record<string, string>>;
}

export type Health =
  | { readonly kind: 'http'; readonly url: string }
  /** TLS with a self-signed serving certificate on loopback: only liveness matters. */
  | { readonly kind: 'https-insecure'; readonly url: string }
  /** TLS verified against the cluster CA, authenticated as admin. */
  | { readonly kind: 'https-admin'; readonly url: string }
  /** A unix socket that accepts connections (containerd's gRPC socket). */
  | { readonly kind: 'unix'; readonly path: string };

export interface ComponentSpec {
  readonly name: ComponentName;
  readonly command: string;
  readonly args: readonly string[];
  readonly health: Health;
}

export type ComponentName =
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kwok'
  | 'containerd'
  | 'kubelet'
  | 'kube-proxy';

/** Annotation by which our kwok picks the nodes it simulates; also the key of their taint. */
export const FAKE_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
/**
 * KWOK's nodes are tainted: their pods run nothing, so only a pod that asks
 * for them (this toleration plus the `type: kwok` node selector) lands there.
 */
export const FAKE_NODE_TAINT = { key: FAKE_NODE_ANNOTATION, value: 'fake', effect: 'NoSchedule' } as const;
export const FAKE_NODE_TOLERATION = { key: FAKE_NODE_ANNOTATION, operator: 'Exists', effect: 'NoSchedule' } as const;
export const FAKE_NODE_SELECTOR = { type: 'kwok' } as const;
export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
export const SERVICE_CLUSTER_IP_RANGE = '10.96.0.0/16';

const loopback = '127.0.0.1';

export function apiServerUrl(ports: Ports, host: string = loopback): string {
  return `https://${host}:${ports.apiserver}`;
}

export function etcdSpec({ ports, layout: l, bin }: ComponentInputs): ComponentSpec {
  const client = `http://${loopback}:${ports.etcdClient}`;
  const peer = `http://${loopback}:${ports.etcdPeer}`;
  return {
    name: 'etcd',
    command: bin('etcd'),
    args: [
      '--name=swarm',
      `--data-dir=${l.etcdDir}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=swarm=${peer}`,
      // A throwaway test cluster: durability is not worth the fsync latency.
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    health: { kind: 'http', url: `${client}/health` },
  };
}

export function apiServerSpec({ ports, bin, pki, apiServerHost, node }: ComponentInputs): ComponentSpec {
  return {
    name: 'kube-apiserver',
    command: bin('kube-apiserver'),
    args: [
      `--etcd-servers=http://${loopback}:${ports.etcdClient}`,
      `--bind-address=${apiServerHost}`,
      `--advertise-address=${apiServerHost}`,
      `--secure-port=${ports.apiserver}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=RBAC,Node',
      `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
      ...(node
        ? [
            // Logs, exec and port-forward: the API server calls the kubelet
            // at its InternalIP, verified against the cluster CA.
            `--kubelet-client-certificate=${node.kubeletClient.cert}`,
            `--kubelet-client-key=${node.kubeletClient.key}`,
            `--kubelet-certificate-authority=${pki.caCert}`,
            '--kubelet-preferred-address-types=InternalIP',
          ]
        : // A loopback advertise address cannot be published as the `kubernetes`
          // Service endpoint; without a real node nothing in-cluster needs it.
          ['--endpoint-reconciler-type=none']),
      '--profiling=false',
    ],
    health: { kind: 'https-admin', url: `${apiServerUrl(ports, apiServerHost)}/readyz` },
  };
}

export function controllerManagerSpec({ ports, bin, pki, kubeconfigs }: ComponentInputs): ComponentSpec {
  return {
    name: 'kube-controller-manager',
    command: bin('kube-controller-manager'),
    args: [
      `--kubeconfig=${kubeconfigs.controllerManager}`,
      `--bind-address=${loopback}`,
      `--secure-port=${ports.controllerManager}`,
      // Every controller acts under its own service account, as in a real cluster,
      // so RBAC for the built-in controllers is exercised too.
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      `--root-ca-file=${pki.caCert}`,
      `--cluster-signing-cert-file=${pki.caCert}`,
      `--cluster-signing-key-file=${pki.caKey}`,
      `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
      // One instance: skipping leader election saves the lease wait at start.
      '--leader-elect=false',
      '--profiling=false',
    ],
    health: { kind: 'https-insecure', url: `https://${loopback}:${ports.controllerManager}/healthz` },
  };
}

export function schedulerSpec({ ports, bin, kubeconfigs }: ComponentInputs): ComponentSpec {
  return {
    name: 'kube-scheduler',
    command: bin('kube-scheduler'),
    args: [
      `--kubeconfig=${kubeconfigs.scheduler}`,
      `--bind-address=${loopback}`,
      `--secure-port=${ports.scheduler}`,
      '--leader-elect=false',
      '--profiling=false',
    ],
    health: { kind: 'https-insecure', url: `https://${loopback}:${ports.scheduler}/healthz` },
  };
}

export function kwokSpec({ ports, bin, kubeconfigs, kwokStageFiles }: ComponentInputs): ComponentSpec {
  return {
    name: 'kwok',
    command: bin('kwok'),
    args: [
      `--kubeconfig=${kubeconfigs.kwok}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${FAKE_NODE_ANNOTATION}=fake`,
      `--node-ip=${loopback}`,
      `--node-port=${ports.kwok}`,
      `--server-address=${loopback}:${ports.kwok}`,
      ...kwokStageFiles.map((file) => `--config=${file}`),
    ],
    health: { kind: 'http', url: `http://${loopback}:${ports.kwok}/healthz` },
  };
}

export function containerdSpec(node: NodeInputs, bin: (name: string) => string): ComponentSpec {
  return {
    name: 'containerd',
    command: bin('containerd'),
    args: [`--config=${node.containerdConfig}`, '--log-level=warn'],
    health: { kind: 'unix', path: node.containerdSocket },
  };
}

export function kubeletSpec({ node, bin, ports }: ComponentInputs & { node: NodeInputs }): ComponentSpec {
  return {
    name: 'kubelet',
    command: bin('kubelet'),
    args: [
      `--config=${node.kubeletConfig}`,
      `--kubeconfig=${node.kubeletKubeconfig}`,
      `--root-dir=${node.kubeletRoot}`,
      `--hostname-override=${node.nodeName}`,
      `--node-ip=${node.nodeIp}`,
      `--node-labels=${Object.entries(node.labels).map(([k, v]) => `${k}=${v}`).join(',')}`,
    ],
    health: { kind: 'http', url: `http://${loopback}:${ports.kubeletHealthz}/healthz` },
  };
}

export function kubeProxySpec({ node, bin, ports }: ComponentInputs & { node: NodeInputs }): ComponentSpec {
  return {
    name: 'kube-proxy',
    command: bin('kube-proxy'),
    args: [`--config=${node.kubeProxyConfig}`],
    health: { kind: 'http', url: `http://${loopback}:${ports.kubeProxyHealthz}/livez` },
  };
}

/**
 * Start order: each stage waits for the previous one to be healthy. With a
 * real node, containerd starts next to the controllers, and the kubelet and
 * kube-proxy form a last stage (started after the node's images are imported).
 */
export function startStages(inputs: ComponentInputs): ComponentSpec[][] {
  const { node } = inputs;
  return [
    [etcdSpec(inputs)],
    [apiServerSpec(inputs)],
    [controllerManagerSpec(inputs), schedulerSpec(inputs), kwokSpec(inputs), ...(node ? [containerdSpec(node, inputs.bin)] : [])],
    ...(node ? [[kubeletSpec({ ...inputs, node }), kubeProxySpec({ ...inputs, node })]] : []),
  ];
}

export interface KubeconfigInput {
  readonly server: string;
  readonly user: string;
  readonly caData: string;
  readonly certData?: string;
  readonly keyData?: string;
  readonly token?: string;
}

/** A single-context kubeconfig with everything embedded, so it can be copied anywhere. */
export function renderKubeconfig(input: KubeconfigInput): string {
  const user: Record<string, string> = {};
  if (input.certData) user['client-certificate-data'] = input.certData;
  if (input.keyData) user['client-key-data'] = input.keyData;
  if (input.token) user.token = input.token;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'swarm-local', cluster: { server: input.server, 'certificate-authority-data': input.caData } }],
    users: [{ name: input.user, user }],
    contexts: [{ name: 'swarm-local', context: { cluster: 'swarm-local', user: input.user } }],
    'current-context': 'swarm-local',
  });
}

export function fakeNodeName(index: number): string {
  return `kwok-node-${index}`;
}

/** A Node object for kwok to simulate, tainted so that only pods that ask for it land there. */
export function fakeNode(index: number): object {
  const name = fakeNodeName(index);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [FAKE_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        ...FAKE_NODE_SELECTOR,
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
    },
    spec: { taints: [FAKE_NODE_TAINT] },
  };
}

interface NodeLike {
  readonly spec?: { readonly taints?: readonly { readonly key: string; readonly effect: string }[] };
  readonly status?: { readonly conditions?: readonly { readonly type: string; readonly status: string }[] };
}

/** Ready, and the node lifecycle controller has lifted its not-ready taints. */
export function nodeSchedulable(node: NodeLike): boolean {
  const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const notReadyTaint = node.spec?.taints?.some((t) => t.key.startsWith('node.kubernetes.io/')) ?? false;
  return ready && !notReadyTaint;
}

/** What `cluster.json` records so another process can find, probe and stop a cluster. */
export interface ClusterState {
  readonly workDir: string;
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly ports: Ports;
  readonly processes: readonly { readonly name: string; readonly pid: number; readonly health: Health }[];
  readonly startedAt: string;
  /** The process that stops the cluster if its owner dies without stopping it. */
  readonly watchdogPid?: number;
  /** Whether `stop` deletes the work directory (per-test-run clusters do). */
  readonly ephemeral: boolean;
  /** The real node's name, when the cluster has one (it holds the machine-wide node lock). */
  readonly realNode?: string;
}
