// Certificates and keys of a local cluster, generated fresh per cluster with
// openssl: a CA, the API server's serving certificate (loopback only), one
// client certificate per identity, and the service-account signing key.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A client identity: the CN is the user name, each O a group. */
export interface ClientIdentity {
  readonly file: string;
  readonly user: string;
  readonly groups: readonly string[];
}

export const CLIENT_IDENTITIES = {
  admin: { file: 'admin', user: 'swarm-admin', groups: ['system:masters'] },
  controllerManager: { file: 'kube-controller-manager', user: 'system:kube-controller-manager', groups: [] },
  scheduler: { file: 'kube-scheduler', user: 'system:kube-scheduler', groups: [] },
} as const satisfies Record<string, ClientIdentity>;

/** Names the API server answers to: loopback, the real node's bridge address, plus the in-cluster service names. */
export const SERVING_SANS = [
  'IP:127.0.0.1',
  'IP:10.244.0.1',
  'DNS:localhost',
  'IP:10.96.0.1',
  'DNS:kubernetes',
  'DNS:kubernetes.default',
  'DNS:kubernetes.default.svc',
  'DNS:kubernetes.default.svc.cluster.local',
] as const;

export function subject(identity: ClientIdentity): string {
  return ['', ...identity.groups.map((group) => `O=${group}`), `CN=${identity.user}`].join('/');
}

export interface Pki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
  cert(identity: ClientIdentity): { cert: string; key: string };
  /** The real node's kubelet serving certificate (when generated for a node). */
  readonly kubeletServing: { cert: string; key: string };
}

/** The identities of a real node's components (the kubelet's names its node, for the Node authorizer). */
export function nodeIdentities(nodeName: string) {
  return {
    kubelet: { file: 'kubelet', user: `system:node:${nodeName}`, groups: ['system:nodes'] },
    kubeProxy: { file: 'kube-proxy', user: 'system:kube-proxy', groups: [] },
    // The API server's identity towards kubelets (logs, exec, port-forward).
    apiServerKubeletClient: { file: 'apiserver-kubelet-client', user: 'kube-apiserver-kubelet-client', groups: ['system:masters'] },
  } as const satisfies Record<string, ClientIdentity>;
}

export interface NodeCertificateRequest {
  readonly name: string;
  readonly ip: string;
}

export function pkiPaths(dir: string): Pki {
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
    cert: (identity) => ({ cert: join(dir, `${identity.file}.crt`), key: join(dir, `${identity.file}.key`) }),
    kubeletServing: { cert: join(dir, 'kubelet-serving.crt'), key: join(dir, 'kubelet-serving.key') },
  };
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export async function generatePki(dir: string, node?: NodeCertificateRequest): Promise<Pki> {
  const pki = pkiPaths(dir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await openssl(['req', '-x509', ...EC_KEY, '-keyout', pki.caKey, '-out', pki.caCert, '-days', '3650', '-subj', '/CN=swarm-local-ca']);
  await issue(pki, 'apiserver', '/CN=kube-apiserver', [
    'keyUsage=critical,digitalSignature,keyEncipherment',
    'extendedKeyUsage=serverAuth',
    `subjectAltName=${SERVING_SANS.join(',')}`,
  ]);
  const identities: ClientIdentity[] = [
    ...Object.values(CLIENT_IDENTITIES),
    ...(node ? Object.values(nodeIdentities(node.name)) : []),
  ];
  if (node) {
    await issue(pki, 'kubelet-serving', `/O=system:nodes/CN=system:node:${node.name}`, [
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=DNS:${node.name},IP:${node.ip}`,
    ]);
  }
  for (const identity of identities) {
    await issue(pki, identity.file, subject(identity), [
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=clientAuth',
    ]);
  }
  // RSA: the signing algorithm every token consumer accepts.
  await openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', pki.serviceAccountKey]);
  await openssl(['pkey', '-in', pki.serviceAccountKey, '-pubout', '-out', pki.serviceAccountPub]);
  return pki;
}

async function issue(pki: Pki, file: string, subj: string, extensions: readonly string[]): Promise<void> {
  const key = join(pki.dir, `${file}.key`);
  const csr = join(pki.dir, `${file}.csr`);
  const ext = join(pki.dir, `${file}.ext`);
  await openssl(['req', '-new', ...EC_KEY, '-keyout', key, '-out', csr, '-subj', subj]);
  await writeFile(ext, extensions.join('\n') + '\n');
  await openssl([
    'x509', '-req', '-in', csr, '-CA', pki.caCert, '-CAkey', pki.caKey, '-CAcreateserial',
    '-out', join(pki.dir, `${file}.crt`), '-days', '365', '-extfile', ext,
  ]);
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    throw new Error(`openssl ${args[0]} failed: ${stderr.trim()}`);
  }
}

export async function base64File(path: string): Promise<string> {
  return (await readFile(path)).toString('base64');
}
