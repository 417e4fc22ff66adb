// The import graph's rules, checked by `npm run lint` (depcruise over lib
// functions bin examples). Type imports count (tsPreCompilationDeps): a circle
// of types is still four concepts leaning on each other.
/** Node modules that reach outside the process: the pure core never touches them. */
const NODE_IO = '^(node:)?(fs|fs/promises|net|http|http2|https|child_process|dgram|dns|dns/promises|tls|worker_threads|cluster|readline|inspector|repl|os|process|stream|timers|timers/promises)$';
const PURE = '^lib/(assignment|plan|workerconfig|decisions)/';
const SHIPPED = '^(lib|functions|bin|examples)/';
const DEV_TOOLING = '^(dev|test|bench)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circle, type imports included: split the shared types into their own file.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-stays-below-its-callers',
      severity: 'error',
      comment: 'lib/ is the core: it never imports the function adapters, the tooling or the examples.',
      from: { path: '^lib/' },
      to: { path: '^(functions|dev|test|bench|examples)/' },
    },
    {
      name: 'shipped-code-without-dev-tooling',
      severity: 'error',
      comment: 'What the image builds (lib, functions, bin, examples) never imports dev/, test/ or bench/.',
      from: { path: SHIPPED },
      to: { path: DEV_TOOLING },
    },
    {
      name: 'pure-core-stays-pure',
      severity: 'error',
      comment: 'The decisions are pure: no reconcilers, no Kubernetes client, no function adapters, no I/O.',
      from: { path: PURE },
      to: { path: ['^lib/reconcilers/', '^lib/kube/k8s-client\\.ts$', '^functions/'] },
    },
    {
      name: 'pure-core-without-io',
      severity: 'error',
      comment: 'The decisions are pure: no Node module that reads or writes the world.',
      from: { path: PURE },
      to: { dependencyTypes: ['core'], path: NODE_IO },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|\\.swarm)/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
  },
};
