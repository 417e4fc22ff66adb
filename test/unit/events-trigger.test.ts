import { describe, expect, it } from 'vitest';
import {
  ASSIGNMENT_CHANGED_TYPE, BadEventError, apiServerEvent, assignmentChangedEvent, fromHttp,
  PING_EVENT_TYPE, resyncPingEvent, toHttpMessage, toTrigger,
} from '../../lib/events/index.js';
import type { KubeObject } from '../../lib/events/index.js';

const pod = (ownerReferences?: unknown[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'worker-1', namespace: 'team-a', uid: 'p-1', ...(ownerReferences ? { ownerReferences } : {}) } as KubeObject['metadata'],
  spec: {},
});

const swarm: KubeObject = {
  apiVersion: 'k8slab.info/v1alpha1',
  kind: 'Swarm',
  metadata: { name: 'demo', namespace: 'team-a', uid: 's-1' },
  spec: { statefulSetName: 'worker' },
};

describe('toTrigger', () => {
  it('maps a Pod to its controlling StatefulSet', () => {
    const owners = [
      { apiVersion: 'v1', kind: 'Node', name: 'node-1' },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'other' },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'worker', controller: true },
    ];
    expect(toTrigger(apiServerEvent({ verb: 'delete', mode: 'resource', object: pod(owners) }))).toMatchObject({
      kind: 'Pod', verb: 'delete', name: 'worker-1', uid: 'p-1', ownerStatefulSet: 'worker',
    });
  });

  it('accepts a worker\'s acknowledgement Lease (coordination.k8s.io) and no Lease of another group', () => {
    const lease = (apiVersion: string): KubeObject => ({ apiVersion, kind: 'Lease', metadata: { name: 'worker-1', namespace: 'team-a', uid: 'l-1' } as KubeObject['metadata'] });
    expect(toTrigger(apiServerEvent({ verb: 'update', mode: 'resource', object: lease('coordination.k8s.io/v1') }))).toMatchObject({ kind: 'Lease', name: 'worker-1' });
    expect(() => toTrigger(apiServerEvent({ verb: 'update', mode: 'resource', object: lease('example.com/v1') }))).toThrow(/unsupported kind Lease/);
  });

  it('leaves ownerStatefulSet out for a Pod no StatefulSet owns, and in ref mode', () => {
    expect(toTrigger(apiServerEvent({ verb: 'add', mode: 'resource', object: pod() }))).not.toHaveProperty('ownerStatefulSet');
    const ref = toTrigger(apiServerEvent({ verb: 'add', mode: 'ref', object: pod([{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'w' }]) }));
    expect(ref).not.toHaveProperty('ownerStatefulSet');
    expect(ref).not.toHaveProperty('object');
  });

  it('classifies a Swarm in every verb and mode', () => {
    for (const mode of ['resource', 'ref'] as const) {
      for (const verb of ['add', 'update', 'delete'] as const) {
        expect(toTrigger(apiServerEvent({ verb, mode, object: swarm }))).toMatchObject({ source: 'apiserver', kind: 'Swarm', verb, mode, namespace: 'team-a', name: 'demo' });
      }
    }
  });

  it('marks a Swarm update whose copy shows its generation observed (assign\'s own status write), and nothing else', () => {
    const at = (generation: unknown, observedGeneration: unknown): KubeObject => ({
      ...swarm,
      metadata: { ...swarm.metadata, generation },
      status: { observedGeneration },
    });
    const marked = (verb: 'add' | 'update' | 'delete', mode: 'resource' | 'ref', object: KubeObject) => {
      const trigger = toTrigger(apiServerEvent({ verb, mode, object }));
      return trigger.source === 'apiserver' && trigger.generationObserved === true;
    };
    expect(marked('update', 'resource', at(3, 3))).toBe(true);
    // A spec change not yet reconciled; no status yet; not numbers; a creation or a deletion; no copy at all.
    expect(marked('update', 'resource', at(4, 3))).toBe(false);
    expect(marked('update', 'resource', swarm)).toBe(false);
    expect(marked('update', 'resource', at('3', '3'))).toBe(false);
    expect(marked('add', 'resource', at(3, 3))).toBe(false);
    expect(marked('delete', 'resource', at(3, 3))).toBe(false);
    expect(marked('update', 'ref', at(3, 3))).toBe(false);
  });

  it('rejects a resource event whose ownerReferences are not a list', () => {
    const bad = { ...pod(), metadata: { ...pod().metadata, ownerReferences: 'worker' } } as unknown as KubeObject;
    expect(() => toTrigger({ type: 'dev.knative.apiserver.resource.add', data: bad })).toThrow(/ownerReferences must be a list/);
  });

  it('rejects an unknown kind with 422, naming it', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c', namespace: 'n' } };
    const error = (() => {
      try {
        toTrigger({ type: 'dev.knative.apiserver.resource.update', data: secret });
      } catch (err) {
        return err;
      }
    })();
    expect(error).toBeInstanceOf(BadEventError);
    expect(error).toMatchObject({ status: 422, problem: expect.stringContaining('unsupported kind Secret') });
  });
});

describe('the resync ping', () => {
  const ping = (data: unknown) => ({ type: PING_EVENT_TYPE, data });

  it('names a namespace whose Swarms are all reconciled', () => {
    expect(toTrigger(ping({ namespace: 'swarm' }))).toEqual({ source: 'ping', type: 'resync', namespace: 'swarm' });
    expect(toTrigger(resyncPingEvent({ namespace: 'team-a' }))).toEqual({ source: 'ping', type: 'resync', namespace: 'team-a' });
  });

  it.each([
    ['no data', undefined, /missing namespace|no data/],
    ['a string', '"swarm"', /must be \{"namespace"/],
    ['no namespace', { name: 'x' }, /missing namespace/],
    ['a namespace that is not a DNS label', { namespace: '../kube-system' }, /data\.namespace: .*not a DNS-1123 label/],
    ['a number as namespace', { namespace: 7 }, /missing namespace/],
  ])('rejects %s with 422', (_what, data, problem) => {
    let error: unknown;
    try {
      toTrigger(ping(data));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(BadEventError);
    expect(error).toMatchObject({ status: 422, problem: expect.stringMatching(problem) });
  });
});

describe('ConfigMap events', () => {
  const configMap = (metadata: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pool-config', namespace: 'n', ...metadata } });
  const owner = { apiVersion: 'k8slab.info/v1alpha1', kind: 'Swarm', name: 'by-owner', uid: 'u', controller: true };

  it('map to their Swarm by controller reference first, else by the k8slab.info/swarm label', () => {
    const both = configMap({ labels: { 'k8slab.info/swarm': 'by-label' }, ownerReferences: [owner] });
    expect(toTrigger({ type: 'dev.knative.apiserver.resource.delete', data: both })).toMatchObject({ kind: 'ConfigMap', name: 'pool-config', swarm: 'by-owner' });
    const labelled = configMap({ labels: { 'k8slab.info/swarm': 'by-label' } });
    expect(toTrigger({ type: 'dev.knative.apiserver.resource.update', data: labelled })).toMatchObject({ swarm: 'by-label' });
    expect(toTrigger({ type: 'dev.knative.apiserver.resource.update', data: configMap({ ownerReferences: [{ ...owner, controller: false }] }) })).not.toHaveProperty('swarm');
    expect(toTrigger({ type: 'dev.knative.apiserver.resource.update', data: configMap({}) })).not.toHaveProperty('swarm');
  });

  it('reject an owner name that is not a Swarm name (422)', () => {
    const bad = configMap({ labels: { 'k8slab.info/swarm': 'Not..A/Name' } });
    expect(() => toTrigger({ type: 'dev.knative.apiserver.resource.update', data: bad })).toThrow(/owning Swarm/);
  });
});

describe('the adapter-shaped builder', () => {
  it('guesses resources and subjects the way apimachinery does', () => {
    const subject = (apiVersion: string, kind: string, name = 'x') => apiServerEvent({ verb: 'update', mode: 'ref', object: { apiVersion, kind, metadata: { name, namespace: 'n' } } }).subject;
    expect(['Pod', 'StatefulSet', 'Swarm', 'Policy', 'Ingress', 'Endpoints'].map((kind) => subject('v1', kind))).toEqual(
      ['pods', 'statefulsets', 'swarms', 'policies', 'ingresses', 'endpoints'].map((resource) => `/apis/v1/namespaces/n/${resource}/x`),
    );
    expect(subject('v1', 'Pod', 'p')).toBe('/apis/v1/namespaces/n/pods/p');
    expect(subject('serving.knative.dev', 'Service', 's')).toBe('/apis/serving.knative.dev/versionUnknown/namespaces/n/services/s');
  });

  it('sets the attributes and extensions the adapter sets, and no time', () => {
    const message = toHttpMessage(apiServerEvent({ verb: 'update', mode: 'ref', object: swarm, source: 'https://10.96.0.1:443', id: 'id-1' }));
    expect(message.headers).toEqual({
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': 'id-1',
      'ce-source': 'https://10.96.0.1:443',
      'ce-type': 'dev.knative.apiserver.ref.update',
      'ce-subject': '/apis/k8slab.info/v1alpha1/namespaces/team-a/swarms/demo',
      'ce-kind': 'Swarm',
      'ce-apiversion': 'k8slab.info/v1alpha1',
      'ce-name': 'demo',
      'ce-namespace': 'team-a',
    });
    expect(JSON.parse(message.body)).toEqual({ apiVersion: 'k8slab.info/v1alpha1', kind: 'Swarm', name: 'demo', namespace: 'team-a' });
  });

  it('round-trips through HTTP in both content modes', () => {
    for (const structured of [false, true]) {
      const message = toHttpMessage(apiServerEvent({ verb: 'add', mode: 'resource', object: swarm }), structured);
      if (structured) expect(JSON.parse(message.body)).not.toHaveProperty('time');
      expect(toTrigger(fromHttp(message.headers, Buffer.from(message.body)))).toMatchObject({ kind: 'Swarm', mode: 'resource', name: swarm.metadata.name });
      // A key only: the event's copy of the object is not kept.
      expect(toTrigger(fromHttp(message.headers, Buffer.from(message.body)))).not.toHaveProperty('object');
    }
  });
});

describe('assignment.changed', () => {
  const data = { swarm: { namespace: 'team-a', name: 'demo', uid: 's-1' }, version: 7, workers: ['worker-0', 'worker-2'] };

  it('is built with a deterministic id and parsed back', () => {
    const event = assignmentChangedEvent(data);
    expect(event).toMatchObject({ type: ASSIGNMENT_CHANGED_TYPE, id: 's-1.7', source: '/apis/k8slab.info/v1alpha1/namespaces/team-a/swarms/demo' });
    expect(assignmentChangedEvent(data).id).toBe(event.id);
    expect(toTrigger(event)).toEqual({ source: 'swarm', type: 'assignment.changed', namespace: 'team-a', name: 'demo', uid: 's-1', version: 7, workers: ['worker-0', 'worker-2'] });
  });

  it('survives HTTP', () => {
    const message = toHttpMessage(assignmentChangedEvent(data));
    expect(toTrigger(fromHttp(message.headers, Buffer.from(message.body)))).toMatchObject({ source: 'swarm', version: 7 });
  });

  it.each([
    ['no swarm uid', { type: ASSIGNMENT_CHANGED_TYPE, data: { ...data, swarm: { namespace: 'n', name: 'd' } } }, /missing swarm.uid/],
    ['a negative version', { type: ASSIGNMENT_CHANGED_TYPE, data: { ...data, version: -1 } }, /version must be a non-negative integer/],
    ['workers that are not names', { type: ASSIGNMENT_CHANGED_TYPE, data: { ...data, workers: [1] } }, /workers must be a list of pod names/],
    ['no data', { type: ASSIGNMENT_CHANGED_TYPE }, /got no data/],
  ])('refuses %s', (_what, event, problem) => {
    expect(() => toTrigger(event)).toThrow(problem);
  });
});
