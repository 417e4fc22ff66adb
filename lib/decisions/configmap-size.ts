// Whether the API server would take a ConfigMap: its data and annotation sizes,
// counted as its validation counts them, checked before the write is sent.
import { KUBERNETES_LIMITS } from '../api/schema.js';
import type { ConfigMapView } from '../kube/types.js';

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');
const base64Bytes = (s: string): number => Buffer.from(s, 'base64').length;
const count = (n: number): string => n.toLocaleString('en-US');

/** The sizes the API server checks on a ConfigMap, as its validation counts them. */
function configMapSizes(cm: ConfigMapView): { dataBytes: number; annotationBytes: number } {
  const dataBytes =
    Object.values(cm.data).reduce((n, v) => n + utf8(v), 0) +
    Object.values(cm.binaryData ?? {}).reduce((n, v) => n + base64Bytes(v), 0);
  const annotationBytes = Object.entries(cm.annotations).reduce((n, [k, v]) => n + utf8(k) + utf8(v), 0);
  return { dataBytes, annotationBytes };
}

/** Why the API server would refuse this ConfigMap for its size, or undefined when it fits. */
export function sizeProblem(cm: ConfigMapView, key: string): string | undefined {
  const { dataBytes, annotationBytes } = configMapSizes(cm);
  const { configMapDataBytes, annotationsBytes } = KUBERNETES_LIMITS;
  if (dataBytes > configMapDataBytes) {
    return `ConfigMap ${cm.name} would hold ${count(dataBytes)} bytes of data (${key}: ${count(utf8(cm.data[key] ?? ''))}); the limit is ${count(configMapDataBytes)} bytes: use fewer or shorter job names, or split the jobs over several Swarms`;
  }
  if (annotationBytes > annotationsBytes) {
    return `ConfigMap ${cm.name} would carry ${count(annotationBytes)} bytes of annotations; the limit is ${count(annotationsBytes)} bytes`;
  }
  return undefined;
}
