// A synthetic event shaped exactly like Knative's ApiServerSource adapter sends
// (knative.dev/eventing pkg/adapter/apiserver/events): same type, source, subject,
// kind/apiversion/name/namespace extensions, JSON data, and no `time` attribute.
// Used by `swarm event send` and by tests.
import { randomUUID } from 'node:crypto';
import { CloudEvent, HTTP } from 'cloudevents';
import { APISERVER_EVENT_TYPES } from './types.js';
import type { KubeObject, Mode, ObjectRef, Verb } from './types.js';

/** In-cluster, the adapter's source is the apiserver host from its rest.Config. */
export const DEFAULT_APISERVER_SOURCE = 'https://kubernetes.default.svc:443';

/** apimachinery's UnsafeGuessKindToResource: lower-case kind, naive plural. */
function guessResource(kind: string): string {
  const singular = kind.toLowerCase();
  if (singular === '') return '';
  if (singular === 'endpoints') return singular;
  if (singular.endsWith('s')) return `${singular}es`;
  if (singular.endsWith('y')) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

/** The adapter's selfLink-like subject, quirks included (`/apis/v1/...` for core kinds). */
function adapterSubject(ref: ObjectRef): string {
  const version = ref.apiVersion.includes('.') && !ref.apiVersion.includes('/') ? `${ref.apiVersion}/versionUnknown` : ref.apiVersion;
  return `/apis/${version}/namespaces/${ref.namespace}/${guessResource(ref.kind)}/${ref.name}`;
}

export interface ApiServerEventInput {
  verb: Verb;
  mode: Mode;
  object: KubeObject;
  source?: string;
  id?: string;
}

export function apiServerEvent(input: ApiServerEventInput): CloudEvent<unknown> {
  const { object, mode, verb } = input;
  const ref: ObjectRef = {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name,
    namespace: object.metadata.namespace,
  };
  return new CloudEvent<unknown>({
    specversion: '1.0',
    id: input.id ?? randomUUID(),
    type: APISERVER_EVENT_TYPES[mode][verb],
    source: input.source ?? DEFAULT_APISERVER_SOURCE,
    subject: adapterSubject(ref),
    datacontenttype: 'application/json',
    kind: ref.kind,
    apiversion: ref.apiVersion,
    name: ref.name,
    namespace: ref.namespace,
    data: mode === 'ref' ? ref : object,
  });
}

export interface HttpMessage {
  headers: Record<string, string>;
  body: string;
}

/** Serialize like the adapter's Go SDK: binary by default; drop the `time` the JS SDK always adds. */
export function toHttpMessage(event: CloudEvent<unknown>, structured = false): HttpMessage {
  if (structured) {
    const { headers, body } = HTTP.structured(event);
    const envelope = JSON.parse(String(body)) as Record<string, unknown>;
    delete envelope.time;
    return { headers: { ...(headers as Record<string, string>) }, body: JSON.stringify(envelope) };
  }
  const { headers, body } = HTTP.binary(event);
  const out = { ...(headers as Record<string, string>) };
  delete out['ce-time'];
  return { headers: out, body: String(body) };
}
