// Smoke test of the real node: a pod from an image built here (a static probe,
// test/integration/probe) really runs on containerd/runc, mounts a ConfigMap,
// resolves a Service through CoreDNS, reaches the API server through the
// `kubernetes` Service, has no default route, and `kubectl logs`, `exec` and
// `port-forward` work against it.
import * as k8s from '@kubernetes/client-node';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { importImages } from '../controlplane/cluster.js';
import { REAL_NODE_LABEL } from '../controlplane/node-config.js';
import { writeOciArchive } from '../controlplane/oci.js';
import { eventually } from '../support/timeline.js';

const run = promisify(execFile);
const realNode = inject('realNode');
const kubeconfig = inject('kubeconfig');
const kubectl = (...args: string[]) => run(inject('kubectl'), ['--kubeconfig', kubeconfig, ...args]);

const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const namespace = `realnode-${randomBytes(3).toString('hex')}`;
const image = `localhost/swarm/probe:${namespace}`;


// A cluster started with SWARM_REAL_NODE=0 has no node to run this on.
describe.skipIf(!realNode)('real node', () => {
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'swarm-probe-'));
    const root = join(work, 'rootfs');
    await mkdir(root);
    await run('go', ['build', '-trimpath', '-o', join(root, 'probe'), '.'], {
      cwd: join(import.meta.dirname, 'probe'),
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    });
    await writeOciArchive(image, root, { entrypoint: ['/probe'] }, join(work, 'probe.tar'));
    await importImages([{ name: image, path: join(work, 'probe.tar') }], inject('clusterWorkDir'));
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  }, 180_000);

  afterAll(async () => {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('runs a real container that mounts a ConfigMap, resolves a Service through CoreDNS and reaches the API server', async () => {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'probe-config' }, data: { 'config.yml': 'version: 1\n' } } });
    const service = await core.createNamespacedService({
      namespace,
      body: { metadata: { name: 'probe' }, spec: { selector: { app: 'probe' }, ports: [{ port: 80, targetPort: 8080 }] } },
    });
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'probe', labels: { app: 'probe' } },
        spec: {
          nodeSelector: { [REAL_NODE_LABEL]: 'true' },
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'probe',
              image,
              imagePullPolicy: 'Never',
              env: [
                { name: 'CONFIG_FILE', value: '/config/config.yml' },
                { name: 'LOOKUP', value: `probe.${namespace}.svc.cluster.local` },
              ],
              readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
              volumeMounts: [{ name: 'config', mountPath: '/config' }],
            },
          ],
          volumes: [{ name: 'config', configMap: { name: 'probe-config' } }],
        },
      },
    });
    const pod = await eventually('the probe pod Ready on the real node', async () => {
      const p = await core.readNamespacedPod({ namespace, name: 'probe' });
      return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
    });
    expect(pod.spec?.nodeName).toBe(realNode);

    const logs = await eventually('the probe to report DNS and API access', async () => {
      const { stdout } = await kubectl('logs', '-n', namespace, 'probe');
      return stdout.includes(`dns probe.${namespace}.svc.cluster.local: ${service.spec?.clusterIP}`) && stdout.includes('api: 200')
        ? stdout
        : undefined;
    });
    expect(logs).toContain('config: version: 1');
    expect(logs).toContain('default route: false');
    expect(logs).not.toContain('default route: true');

    const { stdout: config } = await kubectl('exec', '-n', namespace, 'probe', '--', '/probe', 'cat', '/config/config.yml');
    expect(config).toBe('version: 1\n');
  });

  it('forwards a local port to the pod', async () => {
    const forward = spawn(inject('kubectl'), ['--kubeconfig', kubeconfig, 'port-forward', '-n', namespace, 'pod/probe', ':8080']);
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = '';
        forward.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
          if (match) resolve(Number(match[1]));
        });
        forward.on('exit', (code) => reject(new Error(`kubectl port-forward exited ${code}`)));
      });
      const body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      expect(body).toBe('probe ok');
    } finally {
      forward.kill();
    }
  });
});
