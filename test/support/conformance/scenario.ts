// The conformance scenarios (sdk/conformance/scenarios/*.yaml, format in
// sdk/conformance/README.md), read and checked for shape.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { FailoverSettings, WorkerConfig } from '../../../lib/workerconfig/index.js';

export const SCENARIO_DIR = join(import.meta.dirname, '..', '..', '..', 'sdk', 'conformance', 'scenarios');

export interface LeaseExpectation {
  version: number;
  jobs: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Its loaded-at is no earlier than the worker's start in this run: written by this process (W9, W12). */
  loadedSinceRun?: boolean;
}

export type Step =
  | { run: object }
  | { config: WorkerConfig }
  | { configText: string }
  | { removeConfig: object }
  | { configMap: WorkerConfig }
  | { calls: { start?: string[]; stop?: string[]; withinLease?: boolean } }
  | { lease: LeaseExpectation }
  | { leaseNow: LeaseExpectation }
  | { leaseUnchanged: object }
  | { noLease: object }
  | { health: boolean }
  | { hold: { start?: string; stop?: string } }
  | { release: { start?: string; stop?: string } }
  | { fail: { start?: string; stop?: string } }
  | { sick: string }
  | { well: string }
  | { settle: number }
  | { sigterm: object }
  | { exit: number }
  // Protocol 2 (failover):
  | { failover: FailoverSettings }
  | { failoverText: string }
  | { partition: object }
  | { heal: object }
  | { freeze: object }
  | { thaw: object }
  | { restart: object }
  | { heartbeat: { leaseSeconds: number } }
  | { noRenewal: number }
  | { readiness: boolean }
  | { mayAct: boolean }
  | { mayActNow: boolean }
  // W30: the kubelet's readiness probe (readiness-probe.ts), until it would turn the pod NotReady.
  | { probe: { periodSeconds: number; failureThreshold: number } };

export interface Scenario {
  name: string;
  checks: string[];
  /** The protocol the scenario needs (default 1): a harness runs only those its SDK implements (worker-protocol §9). */
  protocol?: number;
  pod: string;
  env?: Record<string, string>;
  api?: {
    statefulSet?: { replicas: number };
    configMap?: WorkerConfig;
    handover?: boolean;
    leaseAccess?: boolean;
    /** false: the Role lacks get on the StatefulSet and the ConfigMap (a drain's reads are refused, W21). */
    drainAccess?: boolean;
    /** A Lease there before the worker starts; holder `own`: this run's pod uid (an earlier run of the same pod). */
    lease?: { holder: string; version: number; jobs: string[]; labels?: Record<string, string>; annotations?: Record<string, string> };
  };
  steps: Step[];
}

const STEP_KINDS = new Set([
  'run', 'config', 'configText', 'removeConfig', 'configMap', 'calls', 'lease', 'leaseNow', 'leaseUnchanged', 'noLease',
  'health', 'hold', 'release', 'fail', 'sick', 'well', 'settle', 'sigterm', 'exit',
  'failover', 'failoverText', 'partition', 'heal', 'freeze', 'thaw', 'restart', 'heartbeat', 'noRenewal', 'readiness', 'mayAct', 'mayActNow', 'probe',
]);

export function loadScenarios(dir: string = SCENARIO_DIR): Scenario[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((file) => {
      const scenario = { name: file.replace(/\.yaml$/, ''), ...(parse(readFileSync(join(dir, file), 'utf8')) as Omit<Scenario, 'name'>) };
      for (const [i, step] of scenario.steps.entries()) {
        const kinds = Object.keys(step);
        if (kinds.length !== 1 || !STEP_KINDS.has(kinds[0]!)) throw new Error(`${file}: step ${i + 1}: expected one of ${[...STEP_KINDS].join(', ')}, got ${kinds.join(', ')}`);
      }
      if (!scenario.pod || !Array.isArray(scenario.checks)) throw new Error(`${file}: needs pod and checks`);
      return scenario;
    });
}
