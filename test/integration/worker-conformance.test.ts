// The worker protocol's conformance suite (docs/worker-protocol.md,
// sdk/conformance): every SDK's harness through every scenario, each in a
// namespace of its own on the run's API server (the harness plays the pod:
// the ServiceAccount token, the files, the signals). No node is needed.
import { describe, inject, it } from 'vitest';
import { goHarness, pythonHarness, typescriptHarness } from '../support/conformance/harnesses.js';
import { apiServerOf } from '../support/conformance/namespace.js';
import { runScenario, type Harness } from '../support/conformance/run-scenario.js';
import { loadScenarios } from '../support/conformance/scenario.js';

const api = apiServerOf(inject('kubeconfig'));
const scenarios = loadScenarios();
const progress = (line: string) => process.stderr.write(`[conformance] ${line}\n`);

// Made lazily, once: the Go build and the Python venv cost nothing to the files that do not run them.
const harnesses: Record<string, () => Harness> = {
  typescript: typescriptHarness,
  go: (() => {
    let built: Harness | undefined;
    return () => (built ??= goHarness(progress));
  })(),
  python: (() => {
    let made: Harness | undefined;
    return () => (made ??= pythonHarness(progress));
  })(),
};

// The newest protocol each SDK implements (the one its Lease announces with
// failover.yml present): it runs only the scenarios of protocols up to it
// (docs/worker-protocol.md §9).
const protocols: Record<string, number> = { typescript: 2, go: 2, python: 2 };

for (const [sdk, harness] of Object.entries(harnesses)) {
  describe.concurrent(`the ${sdk} SDK`, () => {
    for (const scenario of scenarios) {
      it.skipIf((scenario.protocol ?? 1) > protocols[sdk]!)(`${scenario.name} (${scenario.checks.join(', ')})`, async () => {
        await runScenario(api, scenario, harness());
      }, 120_000);
    }
  });
}
