import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { withWorkerImage, workerPoolYaml } from '../harness/worker-pool.js';

describe('the sample worker pool in a test namespace', () => {
  it('is the sample worker identity, Service, StatefulSet and disruption budget, moved to the namespace and sized', () => {
    const docs = parseAllDocuments(workerPoolYaml('e2e-1', 3)).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace: string }; spec: Record<string, unknown> });
    expect(docs.map((d) => [d.kind, d.metadata.name, d.metadata.namespace])).toEqual([
      ['ServiceAccount', 'swarm-worker', 'e2e-1'],
      ['Role', 'swarm-worker', 'e2e-1'],
      ['RoleBinding', 'swarm-worker', 'e2e-1'],
      ['Service', 'swarm-worker', 'e2e-1'],
      ['StatefulSet', 'swarm-worker', 'e2e-1'],
      ['PodDisruptionBudget', 'swarm-worker', 'e2e-1'],
    ]);
    const sts = docs[4]!.spec as { replicas: number; template: { spec: { containers: Array<{ name: string; env: Array<{ name: string }> }> } } };
    expect(sts.replicas).toBe(3);
    // The recorder tells pod incarnations apart by the uid the worker reports.
    expect(sts.template.spec.containers[0]!.env.map((e) => e.name)).toContain('POD_UID');
  });

  it('runs the image given, never pulled', () => {
    const sts = parseAllDocuments(workerPoolYaml('ns', 1, 'docker.io/library/swarm-worker:dev-abc'))[4]!.toJS() as {
      spec: { template: { spec: { containers: Array<{ image: string; imagePullPolicy: string }> } } };
    };
    expect(sts.spec.template.spec.containers[0]).toMatchObject({ image: 'docker.io/library/swarm-worker:dev-abc', imagePullPolicy: 'Never' });
  });

  it('points the worker StatefulSet of a rendered stream at the image, leaving other objects alone', () => {
    const rendered = 'apiVersion: v1\nkind: Namespace\nmetadata: {name: swarm}\n---\n' + workerPoolYaml('swarm', 2);
    const docs = parseAllDocuments(withWorkerImage(rendered, 'docker.io/library/swarm-worker:dev-abc')).map((d) => d.toJS() as { kind: string; spec?: { template: { spec: { containers: Array<{ image: string; imagePullPolicy: string }> } } } });
    expect(docs.map((d) => d.kind)).toEqual(['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'Service', 'StatefulSet', 'PodDisruptionBudget']);
    expect(docs[5]!.spec!.template.spec.containers[0]).toMatchObject({ image: 'docker.io/library/swarm-worker:dev-abc', imagePullPolicy: 'Never' });
  });
});
