// What the real node runs, as plain data: its fixed addresses, the on-disk
// layout, the configuration files of containerd, the CNI bridge, kubelet and
// kube-proxy, the CoreDNS objects, and the host state it changes (so it can
// be put back). Pure functions; node.ts executes them.
//
// Why these settings (each proven on this machine kind, a Firecracker VM on
// cgroup v1 where root lacks CAP_SYS_RESOURCE):
// - kubelet `failCgroupV1: false`, `cgroupDriver: cgroupfs`: the VM has
//   cgroup v1 and no systemd.
// - containerd `restrict_oom_score_adj`: without CAP_SYS_RESOURCE every
//   sandbox fails ("can't get final child's PID from pipe: EOF").
// - CNI bridge without promiscMode (it conflicts with hairpin mode), no IP
//   masquerade, and pod routes only to the pod and service CIDRs: pods have no
//   default route, so pod traffic cannot leave the machine.
// - The service CIDR is routed to the bridge on the host, so service traffic
//   never follows the default route out of eth0 either.
// - The API server listens on the bridge address (see apiServerHost): pods
//   reach it through the `kubernetes` Service; nothing on eth0 does.
import { stringify } from 'yaml';
import { SERVICE_CLUSTER_IP_RANGE } from './components.js';

/** The bridge the CNI plugin attaches pods to; created before the API server starts. */
export const BRIDGE = 'cni0';
export const POD_CIDR = '10.244.0.0/24';
/** Routed to the bridge inside pods (the whole pod range, as kube-proxy's clusterCIDR). */
export const CLUSTER_CIDR = '10.244.0.0/16';
/** The node's own address on the bridge: pods' gateway, the node IP, the API server's address. */
export const NODE_IP = '10.244.0.1';
export const CLUSTER_DNS_IP = '10.96.0.10';
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
export const KUBELET_PORT = 10250;
/** Label of the real node, for pods that must run there. */
export const REAL_NODE_LABEL = 'swarm.local/real-node';

/** Machine-wide paths: one real node per machine, whichever clone started it. */
export interface NodeLayout {
  /** Persistent state: containerd's content and snapshots, the kubelet's root, CNI IPAM. */
  readonly stateDir: string;
  /** Runtime state: containerd's state and sockets, netns and shm mounts. */
  readonly runDir: string;
  readonly containerdRoot: string;
  readonly containerdState: string;
  readonly containerdSocket: string;
  readonly containerdConfig: string;
  /** containerd's registry hosts directory (config_path): `<host:port>/hosts.toml` per registry it pulls from. */
  readonly registryHostsDir: string;
  readonly runcRoot: string;
  readonly kubeletRoot: string;
  readonly kubeletConfig: string;
  readonly kubeProxyConfig: string;
  readonly podLogsDir: string;
  readonly cniConfDir: string;
  readonly cniIpamDir: string;
  readonly resolvConf: string;
}

export function nodeLayout(stateDir = '/var/lib/swarm-node', runDir = '/run/swarm-node'): NodeLayout {
  return {
    stateDir,
    runDir,
    containerdRoot: `${stateDir}/containerd`,
    containerdState: `${runDir}/containerd`,
    containerdSocket: `${runDir}/containerd/containerd.sock`,
    containerdConfig: `${runDir}/containerd-config.toml`,
    registryHostsDir: `${runDir}/certs.d`,
    runcRoot: `${runDir}/runc`,
    kubeletRoot: `${stateDir}/kubelet`,
    kubeletConfig: `${runDir}/kubelet-config.yaml`,
    kubeProxyConfig: `${runDir}/kube-proxy-config.yaml`,
    podLogsDir: `${stateDir}/pod-logs`,
    cniConfDir: `${runDir}/cni/net.d`,
    cniIpamDir: `${stateDir}/cni/ipam`,
    resolvConf: `${runDir}/resolv.conf`,
  };
}

/** Where pods' CNI plugins are (Debian's containernetworking-plugins). */
export const CNI_BIN_DIR = '/usr/lib/cni';
export const RUNC = '/usr/sbin/runc';

export function containerdConfig(n: NodeLayout, sandboxImage: string): string {
  return `version = 3
root = '${n.containerdRoot}'
state = '${n.containerdState}'
disabled_plugins = ['io.containerd.nri.v1.nri', 'io.containerd.snapshotter.v1.blockfile', 'io.containerd.snapshotter.v1.erofs', 'io.containerd.differ.v1.erofs', 'io.containerd.mount-handler.v1.erofs']

[grpc]
  address = '${n.containerdSocket}'

[ttrpc]
  address = '${n.containerdSocket}.ttrpc'

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '${sandboxImage}'
    # read at each pull: a test's registry adds its hosts.toml while the node runs
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '${n.registryHostsDir}'

  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    disable_apparmor = true
    # root lacks CAP_SYS_RESOURCE on this VM kind
    restrict_oom_score_adj = true
    # netns bind mounts under our state dir, not /var/run/netns
    netns_mounts_under_state_dir = true
    cdi_spec_dirs = []
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = '${RUNC}'
          Root = '${n.runcRoot}'
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['${CNI_BIN_DIR}']
      conf_dir = '${n.cniConfDir}'
      max_conf_num = 1

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'

  [plugins.'io.containerd.internal.v1.opt']
    path = '${n.stateDir}/opt'

  [plugins.'io.containerd.shim.v1.manager']
    socket_dir = '${n.runDir}/s'
`;
}

/**
 * containerd's hosts.toml for a registry at `address` (host:port) that speaks
 * plain HTTP (the test registry on loopback): pull and resolve from it, no TLS.
 */
export function registryHostsToml(address: string): string {
  return `server = "http://${address}"\n\n[host."http://${address}"]\n  capabilities = ["pull", "resolve"]\n`;
}

export function cniConfig(n: NodeLayout): string {
  return (
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: 'swarm',
        plugins: [
          {
            type: 'bridge',
            bridge: BRIDGE,
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            ipam: {
              type: 'host-local',
              ranges: [[{ subnet: POD_CIDR, gateway: NODE_IP }]],
              // No default route: pods reach pods and services, nothing else.
              routes: [{ dst: CLUSTER_CIDR }, { dst: SERVICE_CLUSTER_IP_RANGE }],
              dataDir: n.cniIpamDir,
            },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      },
      null,
      2,
    ) + '\n'
  );
}

export interface KubeletInputs {
  readonly layout: NodeLayout;
  readonly caCert: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly healthzPort: number;
  /** The kubelet's `syncFrequency` (how often it resyncs pods, e.g. ConfigMap volumes); default 1m. */
  readonly syncFrequency?: string;
}

export function kubeletConfig(k: KubeletInputs): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    containerRuntimeEndpoint: `unix://${k.layout.containerdSocket}`,
    imageServiceEndpoint: `unix://${k.layout.containerdSocket}`,
    address: NODE_IP,
    port: KUBELET_PORT,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: k.healthzPort,
    tlsCertFile: k.servingCert,
    tlsPrivateKeyFile: k.servingKey,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: k.caCert } },
    authorization: { mode: 'Webhook' },
    clusterDNS: [CLUSTER_DNS_IP],
    clusterDomain: 'cluster.local',
    // Pods never see the host's resolver: no DNS query leaves the machine.
    resolvConf: k.layout.resolvConf,
    podLogsDir: k.layout.podLogsDir,
    // Otherwise created under /usr/libexec.
    volumePluginDir: `${k.layout.stateDir}/volume-plugins`,
    failSwapOn: false,
    rotateCertificates: false,
    serverTLSBootstrap: false,
    ...(k.syncFrequency ? { syncFrequency: k.syncFrequency } : {}),
    // Images are imported, never pulled: never garbage-collect them, and
    // never evict on a busy shared disk.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
  });
}

export interface KubeProxyInputs {
  readonly kubeconfig: string;
  readonly nodeName: string;
  readonly healthzPort: number;
  readonly metricsPort: number;
}

export function kubeProxyConfig(k: KubeProxyInputs): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    clientConnection: { kubeconfig: k.kubeconfig },
    hostnameOverride: k.nodeName,
    clusterCIDR: CLUSTER_CIDR,
    detectLocalMode: 'ClusterCIDR',
    metricsBindAddress: `127.0.0.1:${k.metricsPort}`,
    healthzBindAddress: `127.0.0.1:${k.healthzPort}`,
    // NodePorts only on the bridge, never on eth0.
    nodePortAddresses: [`${NODE_IP}/32`],
    // Zeroes: leave the machine's conntrack sysctls alone.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    iptables: { localhostNodePorts: false, minSyncPeriod: '1s', syncPeriod: '30s' },
  });
}

/** The pods' resolv.conf for `dnsPolicy: Default`: the cluster DNS, never the host's resolver. */
export function nodeResolvConf(): string {
  return `nameserver ${CLUSTER_DNS_IP}\n`;
}

/**
 * Sysctls the kubelet, kube-proxy or the CNI bridge plugin may change:
 * recorded before the node starts and restored after it stops.
 */
export const NODE_SYSCTLS: readonly string[] = [
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'net.ipv4.ip_forward',
  'net.ipv4.conf.all.forwarding',
  'net.ipv4.conf.default.forwarding',
  'net.ipv6.conf.all.forwarding',
  'net.ipv4.conf.all.route_localnet',
  'net.bridge.bridge-nf-call-iptables',
  'net.bridge.bridge-nf-call-ip6tables',
  'net.bridge.bridge-nf-call-arptables',
  'net.netfilter.nf_conntrack_max',
  'net.netfilter.nf_conntrack_tcp_timeout_established',
  'net.netfilter.nf_conntrack_tcp_timeout_close_wait',
  'net.netfilter.nf_conntrack_tcp_be_liberal',
];

/**
 * Host paths the node's components write outside its own directories,
 * whatever they are configured with: the kubelet's device-plugin socket
 * (/var/lib/kubelet/device-plugins) and container log symlinks
 * (/var/log/containers), libcni's result cache (/var/lib/cni), the kubelet's
 * default volume plugin directory, runc's default root. Cleanup removes the
 * node's entries there, and the directories themselves if they were not
 * there before the node started (and are empty).
 */
export const HOST_PATHS: readonly string[] = [
  '/var/lib/kubelet',
  '/var/log/containers',
  '/var/lib/cni',
  '/usr/libexec/kubernetes',
  '/run/runc',
];

export function sysctlPath(name: string): string {
  return `/proc/sys/${name.replaceAll('.', '/')}`;
}

/** iptables chains the node's components create (kubelet, kube-proxy: KUBE-*; CNI plugins: CNI-*). */
export function isNodeChain(chain: string): boolean {
  return /^(KUBE|CNI)-/.test(chain);
}

/**
 * An `iptables-save` dump of one table without the node's chains and the
 * rules that jump to them, for `iptables-restore` (which replaces the table).
 * Returns undefined when the table holds nothing of the node's.
 */
export function withoutNodeRules(dump: string): string | undefined {
  const lines = dump.split('\n');
  const ours = (line: string): boolean => {
    const declared = /^:(\S+)/.exec(line);
    if (declared) return isNodeChain(declared[1]!);
    const rule = /^-A (\S+)(?:.*?\s-[jg] (\S+))?/.exec(line);
    if (rule) return isNodeChain(rule[1]!) || (rule[2] !== undefined && isNodeChain(rule[2]));
    return false;
  };
  if (!lines.some(ours)) return undefined;
  return lines.filter((line) => !ours(line) && !line.startsWith('#')).join('\n');
}

/** The cluster objects that run CoreDNS as a pod on the real node (no `forward`: no query leaves the machine). */
export function coreDnsObjects(image: string): object[] {
  const labels = { 'k8s-app': 'kube-dns' };
  const corefile = [
    '.:53 {',
    '    errors',
    '    health :8080',
    '    ready :8181',
    '    kubernetes cluster.local in-addr.arpa ip6.arpa {',
    '        pods insecure',
    '        ttl 30',
    '    }',
    '    cache 30',
    '}',
    '',
  ].join('\n');
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: 'kube-system' } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' }],
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: 'kube-system' }, data: { Corefile: corefile } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'coredns', namespace: 'kube-system', labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'coredns',
            // Its own resolv.conf is the node's (the cluster DNS), never the host's.
            dnsPolicy: 'Default',
            nodeSelector: { [REAL_NODE_LABEL]: 'true' },
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: 'coredns',
                image,
                imagePullPolicy: 'Never',
                args: ['-conf', '/etc/coredns/Corefile'],
                ports: [
                  { name: 'dns', containerPort: 53, protocol: 'UDP' },
                  { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' },
                ],
                readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 1 },
                livenessProbe: { httpGet: { path: '/health', port: 8080 }, periodSeconds: 10 },
                volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kube-dns', namespace: 'kube-system', labels },
      spec: {
        clusterIP: CLUSTER_DNS_IP,
        selector: labels,
        ports: [
          { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, targetPort: 53, protocol: 'TCP' },
        ],
      },
    },
  ];
}

/** The API path that creates `object` (the kinds the node's set-up creates). */
export function createPath(object: { apiVersion: string; kind: string; metadata: { namespace?: string } }): string {
  const plural: Record<string, string> = {
    ServiceAccount: 'serviceaccounts',
    ClusterRole: 'clusterroles',
    ClusterRoleBinding: 'clusterrolebindings',
    ConfigMap: 'configmaps',
    Deployment: 'deployments',
    Service: 'services',
  };
  const resource = plural[object.kind];
  if (!resource) throw new Error(`no API path for kind ${object.kind}`);
  const group = object.apiVersion === 'v1' ? '/api/v1' : `/apis/${object.apiVersion}`;
  const ns = object.metadata.namespace ? `/namespaces/${object.metadata.namespace}` : '';
  return `${group}${ns}/${resource}`;
}
