// The only values the worker takes from @kubernetes/client-node, loaded on
// first use (acknowledge.ts loadClient): named, so the image's bundle keeps
// only what they need, in a chunk of its own.
export { AppsV1Api, CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
