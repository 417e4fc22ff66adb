// The decisions behind `npm run deploy` and friends, as pure functions over
// plain data: argument parsing, image overrides, per-namespace bindings and
// the ordered kubectl steps. bin/deploy.ts only runs the steps.
import { parseAllDocuments, stringify } from 'yaml';

export type Command = 'install-crd' | 'uninstall-crd' | 'deploy' | 'undeploy';
export const COMMANDS: readonly Command[] = ['install-crd', 'uninstall-crd', 'deploy', 'undeploy'];

export interface DeployOptions {
  /** kubectl to run; the user's own by default, so any kubeconfig works. */
  readonly kubectl: string;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  /** Kustomize directory to render: knative/ (default), knative/overlays/dev, knative/overlays/prod. */
  readonly overlay: string;
  /** Replaces the functions' image (any `…/swarm` reference). */
  readonly image: string | undefined;
  /** Replaces the reference worker's image (any `…/swarm-worker` reference). */
  readonly workerImage: string | undefined;
  /** Namespaces that hold Swarms: labelled for the ApiServerSource and bound (knative/namespace-access). */
  readonly watchNamespaces: readonly string[];
  readonly dryRun: 'server' | 'client' | undefined;
}

export class UsageError extends Error {}

export const USAGE = `usage: tsx bin/deploy.ts <install-crd|uninstall-crd|deploy|undeploy> [options]
  --kubeconfig PATH        kubeconfig to use (default: kubectl's own: $KUBECONFIG, ~/.kube/config, in-cluster)
  --context NAME           kubeconfig context
  --kubectl PATH           kubectl binary (default: kubectl on PATH)
  --overlay DIR            kustomize directory (default: knative; also knative/overlays/dev, knative/overlays/prod)
  --image REF              functions image (default: the overlay's)
  --worker-image REF       reference worker image, for overlays that include the samples
  --watch-namespace NAME   a namespace holding Swarms (repeatable): label it and bind the functions there
  --dry-run server|client  validate only`;

export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): { command: Command; options: DeployOptions } {
  const [command, ...rest] = argv;
  if (!command || !COMMANDS.includes(command as Command)) throw new UsageError(`unknown command "${command ?? ''}"\n${USAGE}`);
  const options = {
    kubectl: env.KUBECTL ?? 'kubectl',
    kubeconfig: undefined as string | undefined,
    context: undefined as string | undefined,
    overlay: 'knative',
    image: undefined as string | undefined,
    workerImage: undefined as string | undefined,
    watchNamespaces: [] as string[],
    dryRun: undefined as DeployOptions['dryRun'],
  };
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i] as string;
    const [name, inline] = flag.includes('=') ? [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)] : [flag, undefined];
    const value = (): string => {
      const v = inline ?? rest[++i];
      if (v === undefined || v === '') throw new UsageError(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--kubeconfig': options.kubeconfig = value(); break;
      case '--context': options.context = value(); break;
      case '--kubectl': options.kubectl = value(); break;
      case '--overlay': options.overlay = value(); break;
      case '--image': options.image = value(); break;
      case '--worker-image': options.workerImage = value(); break;
      case '--watch-namespace': options.watchNamespaces.push(value()); break;
      case '--dry-run': {
        const v = value();
        if (v !== 'server' && v !== 'client') throw new UsageError('--dry-run is server or client');
        options.dryRun = v;
        break;
      }
      default: throw new UsageError(`unknown option "${flag}"\n${USAGE}`);
    }
  }
  return { command: command as Command, options };
}

/** Global kubectl flags that select the cluster. */
export function clusterFlags(options: Pick<DeployOptions, 'kubeconfig' | 'context'>): string[] {
  return [
    ...(options.kubeconfig ? ['--kubeconfig', options.kubeconfig] : []),
    ...(options.context ? ['--context', options.context] : []),
  ];
}

export type Manifest = Record<string, unknown> & { kind?: string; metadata?: { name?: string; namespace?: string } };

export function splitDocuments(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0]?.message ?? ''}`);
      return doc.toJS() as Manifest | null;
    })
    .filter((doc): doc is Manifest => doc !== null && typeof doc === 'object');
}

export function joinDocuments(docs: readonly Manifest[]): string {
  return docs.map((doc) => stringify(doc)).join('---\n');
}

/** `ghcr.io/k8slab/swarm:0.1.0` → `ghcr.io/k8slab/swarm` (tag or digest dropped; a registry port kept). */
export function repositoryOf(image: string): string {
  const withoutDigest = image.split('@')[0] as string;
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  return colon > slash ? withoutDigest.slice(0, colon) : withoutDigest;
}

/** Replaces the images of our two artifacts wherever containers appear; other images are untouched. */
export function overrideImages(docs: readonly Manifest[], images: { functions?: string | undefined; worker?: string | undefined }): Manifest[] {
  const pick = (image: string): string => {
    const name = repositoryOf(image).split('/').pop();
    if (name === 'swarm' && images.functions) return images.functions;
    if (name === 'swarm-worker' && images.worker) return images.worker;
    return image;
  };
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
        out[key] = value.map((c: Record<string, unknown>) => (typeof c.image === 'string' ? { ...c, image: pick(c.image) } : c));
      } else out[key] = visit(value);
    }
    return out;
  };
  return docs.map((doc) => visit(doc) as Manifest);
}

/** The namespace-access RoleBindings, rendered into `namespace`. */
export function bindNamespace(bindings: readonly Manifest[], namespace: string): Manifest[] {
  return bindings.map((doc) => ({ ...doc, metadata: { ...doc.metadata, namespace } }));
}

/** The installation's resync PingSource (knative/base/pingsource.yaml), the template of every namespace's. */
export const isResyncPing = (doc: Manifest): boolean => doc.kind === 'PingSource' && (doc.metadata?.name ?? '').startsWith('swarm-resync-');

/** The resync ping of `namespace`: the template renamed swarm-resync-<namespace>, its data naming that namespace. */
export function resyncPingFor(template: Manifest, namespace: string): Manifest {
  const spec = (template.spec ?? {}) as Record<string, unknown>;
  return { ...template, metadata: { ...template.metadata, name: `swarm-resync-${namespace}` }, spec: { ...spec, data: JSON.stringify({ namespace }) } };
}

export function isCrd(doc: Manifest): boolean {
  return doc.kind === 'CustomResourceDefinition';
}

/**
 * kubectl failed because an admission webhook did not answer (Knative's, while
 * its pods start or restart): retried, unlike a refusal, which is final.
 */
export function webhookUnavailable(stderr: string): boolean {
  return /failed calling webhook/.test(stderr) && /connection refused|no endpoints available|context deadline exceeded|i\/o timeout|EOF|no route to host|connection reset/.test(stderr);
}

/** How long a step waits for an unanswering webhook: 24 tries, 5 s apart (2 minutes). */
export const WEBHOOK_RETRY = { attempts: 24, delayMs: 5_000 } as const;

/** One kubectl invocation; `stdin` is piped to it when present. */
export interface Step {
  readonly say: string;
  readonly args: readonly string[];
  readonly stdin?: string;
}

export const ENABLED_LABEL = 'k8slab.info/swarm-enabled';
export const KNATIVE_CRDS = ['services.serving.knative.dev', 'brokers.eventing.knative.dev', 'triggers.eventing.knative.dev', 'apiserversources.sources.knative.dev', 'pingsources.sources.knative.dev'];

function dryRunFlags(options: DeployOptions): string[] {
  return options.dryRun ? [`--dry-run=${options.dryRun}`] : [];
}

/** kubectl steps for a command, given the rendered installation and namespace-access bindings. */
export function planSteps(command: Command, options: DeployOptions, rendered: { installation: Manifest[]; crd: Manifest[]; bindings: Manifest[] }): Step[] {
  const cluster = clusterFlags(options);
  // The installation is swarm-deploy's to own: --force-conflicts takes over fields an earlier
  // `kubectl apply -k knative/` (client-side) holds, which conflict where the API server defaults
  // inside atomic lists (the worker Lease policy's matchConstraints).
  const apply = (say: string, docs: Manifest[]): Step => ({
    say,
    args: [...cluster, 'apply', '--server-side', '--force-conflicts', '--field-manager=swarm-deploy', ...dryRunFlags(options), '-f', '-'],
    stdin: joinDocuments(docs),
  });
  const remove = (say: string, docs: Manifest[]): Step => ({
    say,
    args: [...cluster, 'delete', '--ignore-not-found', '--wait=false', ...dryRunFlags(options), '-f', '-'],
    stdin: joinDocuments(docs),
  });
  const waitEstablished = (crds: Manifest[]): Step[] =>
    options.dryRun || crds.length === 0
      ? []
      : [{ say: 'waiting for the CRD to be established', args: [...cluster, 'wait', '--for=condition=Established', '--timeout=60s', ...crds.map((c) => `crd/${c.metadata?.name ?? ''}`)] }];
  const ping = rendered.installation.find(isResyncPing);
  const pingOf = (ns: string): Manifest[] => (ping ? [resyncPingFor(ping, ns)] : []);
  const perNamespace = (add: boolean): Step[] =>
    options.watchNamespaces.flatMap((ns) => [
      add
        ? apply(`binding the functions in namespace ${ns}`, [...bindNamespace(rendered.bindings, ns), ...pingOf(ns)])
        : remove(`removing the functions' bindings in namespace ${ns}`, [...bindNamespace(rendered.bindings, ns), ...pingOf(ns)]),
      {
        say: add ? `labelling namespace ${ns} ${ENABLED_LABEL}=true` : `unlabelling namespace ${ns}`,
        args: [...cluster, 'label', 'namespace', ns, add ? `${ENABLED_LABEL}=true` : `${ENABLED_LABEL}-`, '--overwrite', ...dryRunFlags(options)],
      },
    ]);

  switch (command) {
    case 'install-crd':
      return [apply('installing the Swarm CRD', rendered.crd), ...waitEstablished(rendered.crd)];
    case 'uninstall-crd':
      return [remove('removing the Swarm CRD (and with it every Swarm)', rendered.crd)];
    case 'deploy': {
      const crds = rendered.installation.filter(isCrd);
      return [
        { say: 'checking that Knative Serving and Eventing are installed', args: [...cluster, 'get', 'crd', ...KNATIVE_CRDS, '-o', 'name'] },
        ...(crds.length ? [apply('installing the Swarm CRD', crds), ...waitEstablished(crds)] : []),
        apply(`applying ${options.overlay}`, rendered.installation.filter((d) => !isCrd(d))),
        ...perNamespace(true),
      ];
    }
    case 'undeploy':
      // The CRD stays (deleting it deletes every Swarm): `npm run uninstall:crd` for that.
      return [...perNamespace(false), remove(`deleting ${options.overlay} (the CRD is kept)`, rendered.installation.filter((d) => !isCrd(d)).reverse())];
  }
}
