// KubeClient over @kubernetes/client-node: the only place that speaks the
// Kubernetes API. Converts API objects to plain views (views.ts), maps failures
// to KubeError kinds (errors.ts), bounds every call with a timeout, and lets
// observability wrap each call (a span and a metric per request).
import { AsyncLocalStorage } from 'node:async_hooks';
import https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type Swarm } from '../api/types.js';
import type { AnnotateOutcome, DeleteOutcome, KubeClient } from './client.js';
import type { ScaleView } from './types.js';
import { KubeError, describe, toKubeError, type KubeCall } from './errors.js';
import { configMapView, deploymentView, leaseView, mergePatchBody, podView, scaleView, statefulSetView, toV1ConfigMap } from './views.js';

/**
 * Wraps one API call (tracing, metrics). The default just runs it.
 * `responseStatus`: the HTTP status of the call's response once it has one
 * (the client's return values do not carry it).
 */
export type Instrument = <T>(call: KubeCall, run: () => Promise<T>, responseStatus: () => number | undefined) => Promise<T>;

// The status of each HTTP response, handed to the call that made it: the
// client's middleware runs in the async context of that call.
const responseSlot = new AsyncLocalStorage<{ status?: number }>();
const recordResponseStatus: k8s.ObservableMiddleware = {
  pre: (context) => new k8s.Observable(Promise.resolve(context)),
  post: (response) => {
    const slot = responseSlot.getStore();
    if (slot) slot.status = response.httpStatusCode;
    return new k8s.Observable(Promise.resolve(response));
  },
};

/**
 * Per-call options that attach that middleware (client-node 1.x applies a
 * configuration's own middleware only to calls that pass some of their own).
 */
const reportStatus: k8s.ConfigurationOptions = { middleware: [recordResponseStatus], middlewareMergeStrategy: 'append' };

export interface K8sClientOptions {
  /** Per-request deadline; a slow API server is a transient failure. */
  timeoutMs?: number;
  instrument?: Instrument;
}

/** Loads `path` when given; else KUBECONFIG / ~/.kube/config out of cluster, the service account in cluster. */
export function loadKubeConfig(path?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/** Swarms per page when listing a namespace's Swarms for a resync. */
const SWARM_PAGE = 100;

/** Shown in managedFields, so other owners of the ConfigMap can tell whose fields these are. */
const FIELD_MANAGER = 'swarm';

/**
 * The API clients of `kc`, sharing one keep-alive agent. The client builds a
 * fresh agent for every request, so each one paid a TLS handshake (most of a
 * no-op reconcile's CPU); the agent is rebuilt only if the credentials change.
 */
function apiClients(kc: k8s.KubeConfig) {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('No active cluster!');
  let shared: { agent: https.Agent; credentials: string } | undefined;
  const auth: k8s.SecurityAuthentication = {
    getName: () => 'kubeconfig, one keep-alive agent',
    async applySecurityAuthentication(context) {
      await kc.applySecurityAuthentication(context);
      const fresh = context.getAgent();
      if (!(fresh instanceof https.Agent)) return; // plain HTTP or a proxy: as the client made it
      const o = fresh.options;
      const credentials = [o.ca, o.cert, o.key, o.pfx, o.servername, o.rejectUnauthorized].map(String).join('\0');
      if (shared?.credentials !== credentials) {
        shared?.agent.destroy();
        shared = { agent: new https.Agent({ ...o, keepAlive: true }), credentials };
      }
      context.setAgent(shared.agent);
    },
  };
  const configuration = k8s.createConfiguration({ baseServer: new k8s.ServerConfiguration(server, {}), authMethods: { default: auth } });
  return {
    core: new k8s.CoreV1Api(configuration),
    apps: new k8s.AppsV1Api(configuration),
    custom: new k8s.CustomObjectsApi(configuration),
    coordination: new k8s.CoordinationV1Api(configuration),
  };
}

export function createK8sClient(kc: k8s.KubeConfig, options: K8sClientOptions = {}): KubeClient {
  const { core, apps, custom, coordination } = apiClients(kc);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const instrument: Instrument = options.instrument ?? ((_call, run) => run());

  const call = <T>(c: KubeCall, run: () => Promise<T>): Promise<T> => {
    const slot: { status?: number } = {};
    return responseSlot
      .run(slot, () => instrument(c, () => withDeadline(run(), timeoutMs, c), () => slot.status))
      .catch((err: unknown) => {
        throw toKubeError(err, c);
      });
  };
  const orUndefined = <T>(p: Promise<T>): Promise<T | undefined> =>
    p.catch((err: unknown) => {
      if (err instanceof KubeError && err.kind === 'NotFound') return undefined;
      throw err;
    });
  /** A GET whose 404 is an answer (the object is not there), not a failure. */
  const getOne = <T>(resource: string, namespace: string, name: string, read: () => Promise<T>): Promise<T | undefined> =>
    orUndefined(call({ verb: 'GET', resource, namespace, name }, read));
  const swarmPath = (namespace: string) => ({ group: GROUP, version: VERSION, plural: PLURAL, namespace });

  // A pool's scale subresource: the same guarded get and update for either kind.
  type ScaleRequest = { namespace: string; name: string };
  const scaleApi = {
    StatefulSet: {
      resource: 'statefulsets/scale',
      read: (r: ScaleRequest) => apps.readNamespacedStatefulSetScale(r, reportStatus),
      replace: (r: ScaleRequest & { body: k8s.V1Scale; fieldManager: string }) => apps.replaceNamespacedStatefulSetScale(r, reportStatus),
    },
    Deployment: {
      resource: 'deployments/scale',
      read: (r: ScaleRequest) => apps.readNamespacedDeploymentScale(r, reportStatus),
      replace: (r: ScaleRequest & { body: k8s.V1Scale; fieldManager: string }) => apps.replaceNamespacedDeploymentScale(r, reportStatus),
    },
  } as const;
  const getScale = (kind: keyof typeof scaleApi, namespace: string, name: string): Promise<ScaleView | undefined> =>
    orUndefined(call({ verb: 'GET', resource: scaleApi[kind].resource, namespace, name }, async () => scaleView(await scaleApi[kind].read({ namespace, name }))));
  const replaceScale = (kind: keyof typeof scaleApi, scale: ScaleView): Promise<ScaleView> => {
    if (!scale.resourceVersion) throw new Error(`refusing an unguarded resize of ${kind} ${scale.namespace}/${scale.name}`);
    const { namespace, name } = scale;
    return call({ verb: 'UPDATE', resource: scaleApi[kind].resource, namespace, name }, async () =>
      scaleView(
        await scaleApi[kind].replace({
          namespace,
          name,
          body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name, namespace, resourceVersion: scale.resourceVersion }, spec: { replicas: scale.replicas } },
          fieldManager: FIELD_MANAGER,
        }),
      ),
    );
  };

  return {
    getSwarm: (namespace, name) =>
      orUndefined(
        call({ verb: 'GET', resource: PLURAL, namespace, name }, async () =>
          (await custom.getNamespacedCustomObject({ ...swarmPath(namespace), name }, reportStatus)) as Swarm,
        ),
      ),

    listSwarmsNaming: (namespace, name, kind = 'StatefulSet') =>
      call({ verb: 'LIST', resource: PLURAL, namespace }, async () => {
        // spec.statefulSetName and spec.deploymentName are selectable fields of
        // the CRD; a DNS label needs no escaping in a field selector.
        const fieldSelector = `spec.${kind === 'Deployment' ? 'deploymentName' : 'statefulSetName'}=${name}`;
        const list = (await custom.listNamespacedCustomObject({ ...swarmPath(namespace), fieldSelector }, reportStatus)) as { items?: Swarm[] };
        return list.items ?? [];
      }),

    listSwarmNames: (namespace) =>
      call({ verb: 'LIST', resource: PLURAL, namespace }, async () => {
        // Paged, and only names kept: a namespace's Swarms may be many and large.
        const names: string[] = [];
        let next: string | undefined;
        do {
          const page = (await custom.listNamespacedCustomObject(
            { ...swarmPath(namespace), limit: SWARM_PAGE, ...(next ? { _continue: next } : {}) },
            reportStatus,
          )) as { items?: Swarm[]; metadata?: { continue?: string } };
          for (const s of page.items ?? []) if (!s.metadata.deletionTimestamp) names.push(s.metadata.name);
          next = page.metadata?.continue || undefined;
        } while (next);
        return names;
      }),

    replaceSwarmStatus: (swarm) =>
      call({ verb: 'UPDATE', resource: `${PLURAL}/status`, namespace: swarm.metadata.namespace, name: swarm.metadata.name }, async () =>
        (await custom.replaceNamespacedCustomObjectStatus({
          ...swarmPath(swarm.metadata.namespace),
          name: swarm.metadata.name,
          body: swarm,
        }, reportStatus)) as Swarm,
      ),

    getStatefulSet: (namespace, name) =>
      getOne('statefulsets', namespace, name, async () => statefulSetView(await apps.readNamespacedStatefulSet({ namespace, name }, reportStatus))),

    getStatefulSetScale: (namespace, name) => getScale('StatefulSet', namespace, name),
    replaceStatefulSetScale: (scale) => replaceScale('StatefulSet', scale),

    getDeployment: (namespace, name) =>
      getOne('deployments', namespace, name, async () => deploymentView(await apps.readNamespacedDeployment({ namespace, name }, reportStatus))),

    getDeploymentScale: (namespace, name) => getScale('Deployment', namespace, name),
    replaceDeploymentScale: (scale) => replaceScale('Deployment', scale),

    listPods: (namespace, labelSelector) =>
      call({ verb: 'LIST', resource: 'pods', namespace }, async () =>
        (await core.listNamespacedPod({ namespace, labelSelector }, reportStatus)).items.map(podView),
      ),

    listLeases: (namespace, labelSelector) =>
      call({ verb: 'LIST', resource: 'leases', namespace }, async () =>
        (await coordination.listNamespacedLease({ namespace, labelSelector }, reportStatus)).items.map(leaseView),
      ),

    getConfigMap: (namespace, name) =>
      orUndefined(
        call({ verb: 'GET', resource: 'configmaps', namespace, name }, async () =>
          configMapView(await core.readNamespacedConfigMap({ namespace, name }, reportStatus)),
        ),
      ),

    createConfigMap: (cm) =>
      call({ verb: 'CREATE', resource: 'configmaps', namespace: cm.namespace, name: cm.name }, async () =>
        configMapView(await core.createNamespacedConfigMap({ namespace: cm.namespace, body: toV1ConfigMap(cm), fieldManager: FIELD_MANAGER }, reportStatus)),
      ),

    patchConfigMap: (patch) => {
      if (!patch.resourceVersion) throw new Error(`refusing an unguarded write of ConfigMap ${patch.namespace}/${patch.name}`);
      return call({ verb: 'PATCH', resource: 'configmaps', namespace: patch.namespace, name: patch.name }, async () =>
        configMapView(
          await core.patchNamespacedConfigMap(
            { namespace: patch.namespace, name: patch.name, body: mergePatchBody(patch), fieldManager: FIELD_MANAGER },
            k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch, reportStatus),
          ),
        ),
      );
    },

    annotatePod: (namespace, name, preconditions, annotations) => {
      if (!preconditions.resourceVersion) throw new Error(`refusing an unguarded write of pod ${namespace}/${name}`);
      // The resourceVersion guards the write (409 if the pod changed or was
      // replaced); the uid says which pod was meant.
      const body = { metadata: { uid: preconditions.uid, resourceVersion: preconditions.resourceVersion, annotations } };
      return call({ verb: 'PATCH', resource: 'pods', namespace, name }, async () => {
        await core.patchNamespacedPod({ namespace, name, body, fieldManager: FIELD_MANAGER }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch, reportStatus));
        return 'annotated' as AnnotateOutcome;
      }).catch((err: unknown): AnnotateOutcome => {
        if (err instanceof KubeError && err.kind === 'NotFound') return 'gone';
        if (err instanceof KubeError && err.kind === 'Conflict') return 'precondition-failed';
        throw err;
      });
    },

    deletePod: (namespace, name, preconditions) =>
      call({ verb: 'DELETE', resource: 'pods', namespace, name }, async () => {
        await core.deleteNamespacedPod({ namespace, name, body: { preconditions } }, reportStatus);
        return 'deleted' as DeleteOutcome;
      }).catch((err: unknown): DeleteOutcome => {
        if (err instanceof KubeError && err.kind === 'NotFound') return 'gone';
        if (err instanceof KubeError && err.kind === 'Conflict') return 'precondition-failed';
        throw err;
      }),

    createEvent: (ev) =>
      call({ verb: 'CREATE', resource: 'events', namespace: ev.namespace }, async () => {
        const now = new Date();
        await core.createNamespacedEvent({
          namespace: ev.namespace,
          body: {
            metadata: { generateName: `${ev.involvedObject.name}.`, namespace: ev.namespace },
            involvedObject: ev.involvedObject,
            type: ev.type,
            reason: ev.reason,
            message: ev.message,
            source: { component: ev.reportingComponent },
            reportingComponent: ev.reportingComponent,
            reportingInstance: process.env.HOSTNAME ?? ev.reportingComponent,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        }, reportStatus);
      }),
  };
}

function withDeadline<T>(p: Promise<T>, ms: number, c: KubeCall): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new KubeError('Transient', 504, `timed out after ${ms} ms`, describe(c), c.verb)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/**
 * A client for when no cluster configuration could be loaded: the server still
 * starts and answers health checks; every event gets a retryable 503.
 */
export function unreachableClient(reason: string): KubeClient {
  const fail = () => Promise.reject(new KubeError('Transient', 503, `no Kubernetes API: ${reason}`, 'connect'));
  return {
    getSwarm: fail,
    listSwarmsNaming: fail,
    listSwarmNames: fail,
    replaceSwarmStatus: fail,
    getStatefulSet: fail,
    getStatefulSetScale: fail,
    replaceStatefulSetScale: fail,
    getDeployment: fail,
    getDeploymentScale: fail,
    replaceDeploymentScale: fail,
    listPods: fail,
    listLeases: fail,
    getConfigMap: fail,
    createConfigMap: fail,
    patchConfigMap: fail,
    annotatePod: fail,
    deletePod: fail,
    createEvent: fail,
  };
}
