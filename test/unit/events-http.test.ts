import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BadEventError, fromHttp, toTrigger } from '../../lib/events/index.js';
import type { BadEventStatus, IncomingHeaders } from '../../lib/events/index.js';

// Requests as Knative's ApiServerSource adapter sends them through a Broker
// (knative.dev/eventing pkg/adapter/apiserver/events/events.go, Go SDK binary mode):
// canonicalised Go header names, `kind`/`apiversion`/`name`/`namespace` extensions,
// the apiserver host as source, a selfLink-like subject, no `time`.
const statefulSet = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'worker', namespace: 'team-a', uid: '5f1c', resourceVersion: '812', generation: 2 },
  spec: { replicas: 3, serviceName: 'worker' },
  status: { replicas: 3, readyReplicas: 2 },
};

function adapterHeaders(type: string, obj: { apiVersion: string; kind: string; name: string; namespace: string; subject: string }): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'Ce-Specversion': '1.0',
    'Ce-Id': '0b1e8f4c-6d0a-4a3e-9a57-2f3c4d5e6f70',
    'Ce-Source': 'https://10.96.0.1:443',
    'Ce-Type': type,
    'Ce-Subject': obj.subject,
    'Ce-Kind': obj.kind,
    'Ce-Apiversion': obj.apiVersion,
    'Ce-Name': obj.name,
    'Ce-Namespace': obj.namespace,
    'Ce-Knativearrivaltime': '2026-11-22T01:00:00.000Z',
    Traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  };
}

const stsRef = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'worker', namespace: 'team-a', subject: '/apis/apps/v1/namespaces/team-a/statefulsets/worker' };

const resourceUpdate = () => ({
  headers: adapterHeaders('dev.knative.apiserver.resource.update', stsRef),
  body: Buffer.from(JSON.stringify(statefulSet)),
});

function rejection(headers: IncomingHeaders, body: Buffer | string, options?: { maxBodyBytes?: number }): BadEventError {
  try {
    fromHttp(headers, Buffer.isBuffer(body) ? body : Buffer.from(body), options);
  } catch (err) {
    if (err instanceof BadEventError) return err;
    throw err;
  }
  throw new Error('expected fromHttp to reject the request');
}

describe('fromHttp accepts what the adapter sends', () => {
  it('binary mode, resource update of a StatefulSet', () => {
    const { headers, body } = resourceUpdate();
    const event = fromHttp(headers, body);
    expect(event).toMatchObject({ type: 'dev.knative.apiserver.resource.update', source: 'https://10.96.0.1:443', kind: 'StatefulSet', name: 'worker' });
    expect(toTrigger(event)).toEqual({
      source: 'apiserver', verb: 'update', mode: 'resource', kind: 'StatefulSet', apiVersion: 'apps/v1',
      namespace: 'team-a', name: 'worker', uid: '5f1c', resourceVersion: '812',
    });
  });

  it('binary mode, ref delete', () => {
    const headers = adapterHeaders('dev.knative.apiserver.ref.delete', stsRef);
    const body = JSON.stringify({ kind: 'StatefulSet', namespace: 'team-a', name: 'worker', apiVersion: 'apps/v1' });
    expect(toTrigger(fromHttp(headers, Buffer.from(body)))).toEqual({
      source: 'apiserver', verb: 'delete', mode: 'ref', kind: 'StatefulSet', apiVersion: 'apps/v1', namespace: 'team-a', name: 'worker',
    });
  });

  it('structured mode', () => {
    const envelope = {
      specversion: '1.0', id: 'abc', source: 'https://10.96.0.1:443', type: 'dev.knative.apiserver.resource.add',
      subject: stsRef.subject, kind: 'StatefulSet', apiversion: 'apps/v1', name: 'worker', namespace: 'team-a',
      datacontenttype: 'application/json', data: statefulSet,
    };
    const event = fromHttp({ 'content-type': 'application/cloudevents+json; charset=utf-8' }, Buffer.from(JSON.stringify(envelope)));
    expect(toTrigger(event)).toMatchObject({ verb: 'add', mode: 'resource', kind: 'StatefulSet', name: 'worker' });
  });

  it('a content type with parameters, and header values Node gives as arrays', () => {
    const { headers, body } = resourceUpdate();
    const event = fromHttp({ ...headers, 'Content-Type': 'application/json; charset=utf-8', 'x-forwarded-for': ['a', 'b'] }, body);
    expect(event.type).toBe('dev.knative.apiserver.resource.update');
  });

  it.each(['application/json;charset=utf-8', 'Application/JSON', ' \tapplication/json', 'APPLICATION/JSON; Charset=UTF-8'])('binary mode with content type %j: data is the object', (type) => {
    const { headers, body } = resourceUpdate();
    expect(fromHttp({ ...headers, 'Content-Type': type }, body).data).toEqual(statefulSet);
  });

  it.each(['application/cloudevents+json;charset=UTF-8', 'Application/CloudEvents+JSON', ' application/cloudevents+json'])('structured mode with content type %j', (type) => {
    const envelope = { specversion: '1.0', id: 'abc', source: 's', type: 'dev.knative.apiserver.resource.add', datacontenttype: 'application/json', data: statefulSet };
    expect(fromHttp({ 'content-type': type }, Buffer.from(JSON.stringify(envelope))).data).toEqual(statefulSet);
  });
});

describe('fromHttp rejects bad input with a final 4xx that names the problem', () => {
  const cases: Array<[string, () => BadEventError, BadEventStatus, RegExp]> = [
    ['a body over the limit', () => rejection(resourceUpdate().headers, resourceUpdate().body, { maxBodyBytes: 100 }), 413, /exceeds the limit of 100 bytes/],
    ['a request that is not a CloudEvent', () => rejection({ 'content-type': 'application/json' }, '{}'), 400, /not a CloudEvent/],
    ['binary mode with a non-JSON content type', () => rejection({ ...resourceUpdate().headers, 'Content-Type': 'text/plain' }, 'hello'), 415, /text\/plain/],
    ['binary mode without a content type', () => {
      const { 'Content-Type': _drop, ...headers } = resourceUpdate().headers;
      return rejection(headers, resourceUpdate().body);
    }, 415, /<none>/],
    ['a batch', () => rejection({ 'content-type': 'application/cloudevents-batch+json' }, '[]'), 415, /batched/],
    ['an unknown structured format', () => rejection({ 'content-type': 'application/cloudevents+xml' }, '<e/>'), 415, /cloudevents\+xml/],
    ['structured mode with invalid JSON', () => rejection({ 'content-type': 'application/cloudevents+json' }, '{"id":'), 400, /not valid JSON/],
    ['structured mode with an empty body', () => rejection({ 'content-type': 'application/cloudevents+json' }, ''), 400, /empty body/],
    ['binary mode with invalid JSON data', () => rejection(resourceUpdate().headers, '{"apiVersion": '), 400, /not valid JSON/],
    ['a missing required attribute (source)', () => {
      const { 'Ce-Source': _drop, ...headers } = resourceUpdate().headers;
      return rejection(headers, resourceUpdate().body);
    }, 400, /malformed CloudEvent.*source/],
    ['a missing id in structured mode', () => rejection({ 'content-type': 'application/cloudevents+json' }, JSON.stringify({ specversion: '1.0', source: 's', type: 'dev.knative.apiserver.ref.add' })), 400, /missing required attribute id/],
    ['binary mode without a spec version', () => {
      const { 'Ce-Specversion': _drop, ...headers } = resourceUpdate().headers;
      return rejection(headers, resourceUpdate().body);
    }, 400, /missing required attribute specversion \(ce-specversion header\)/],
    ['spec version 0.3', () => rejection({ ...resourceUpdate().headers, 'Ce-Specversion': '0.3' }, resourceUpdate().body), 400, /unsupported specversion "0.3": Swarm takes CloudEvents 1.0 only/],
    ['an unknown spec version', () => rejection({ ...resourceUpdate().headers, 'Ce-Specversion': '9.9' }, resourceUpdate().body), 400, /unsupported specversion "9.9"/],
    ['an unknown event type', () => rejection({ ...resourceUpdate().headers, 'Ce-Type': 'com.example.other' }, resourceUpdate().body), 422, /unknown event type "com.example.other"/],
    ['a resource event without data', () => rejection(resourceUpdate().headers, ''), 422, /data must be a Kubernetes object, got no data/],
    ['a resource event whose object has no metadata.name', () => {
      const { metadata: { name: _n, ...metadata }, ...rest } = statefulSet;
      return rejection(resourceUpdate().headers, JSON.stringify({ ...rest, metadata }));
    }, 422, /missing metadata\.name/],
    ['a resource event whose data is a list', () => rejection(resourceUpdate().headers, '[1,2]'), 422, /got an array/],
    ['a ref event without kind and namespace', () => rejection(
      adapterHeaders('dev.knative.apiserver.ref.update', stsRef), JSON.stringify({ apiVersion: 'apps/v1', name: 'worker' }),
    ), 422, /missing kind, namespace/],
    ['an event whose kind attribute disagrees with its data', () => rejection(
      { ...resourceUpdate().headers, 'Ce-Kind': 'Pod' }, resourceUpdate().body,
    ), 422, /kind attribute says Pod but data is a StatefulSet/],
    ['an event for a kind Swarm does not watch', () => rejection(
      adapterHeaders('dev.knative.apiserver.resource.add', { ...stsRef, apiVersion: 'v1', kind: 'Secret', subject: '/apis/v1/namespaces/team-a/secrets/worker' }),
      JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'worker', namespace: 'team-a' } }),
    ), 422, /unsupported kind Secret \(v1\)/],
    ['a Pod of another API group', () => rejection(
      adapterHeaders('dev.knative.apiserver.ref.add', stsRef), JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Pod', name: 'p', namespace: 'n' }),
    ), 422, /unsupported kind Pod \(example.com\/v1\)/],
    ['an assignment change without workers', () => rejection(
      { 'content-type': 'application/cloudevents+json' },
      JSON.stringify({ specversion: '1.0', id: 'u.1', source: '/s', type: 'info.k8slab.swarm.assignment.changed', data: { swarm: { namespace: 'n', name: 's', uid: 'u' }, version: 1 } }),
    ), 422, /workers must be a list/],
  ];

  it.each(cases)('%s', (_what, reject, status, problem) => {
    const error = reject();
    expect(error.status).toBe(status);
    expect(error.problem).toMatch(problem);
    expect(JSON.parse(JSON.stringify(error))).toEqual({ error: error.problem, status });
  });
});

// Real requests recorded from a cluster land here (test/fixtures/apiserversource/*.json,
// `{ "headers": {...}, "body": "<string>" }`); each must parse and classify.
const fixtureDir = new URL('../fixtures/apiserversource/', import.meta.url);
const fixtureFiles = existsSync(fixtureDir) ? readdirSync(fixtureDir).filter((f) => f.endsWith('.json')) : [];

describe.runIf(fixtureFiles.length > 0)('recorded ApiServerSource requests', () => {
  for (const file of fixtureFiles) {
    it(`${file} parses and classifies`, () => {
      const recorded = JSON.parse(readFileSync(new URL(file, fixtureDir), 'utf8')) as { headers: IncomingHeaders; body: string };
      const trigger = toTrigger(fromHttp(recorded.headers, Buffer.from(recorded.body)));
      expect(trigger.source).toBe('apiserver');
      if (trigger.source === 'apiserver') {
        expect(['Swarm', 'StatefulSet', 'Pod']).toContain(trigger.kind);
        expect(trigger.name).not.toBe('');
        expect(trigger.namespace).not.toBe('');
      }
    });
  }
});
