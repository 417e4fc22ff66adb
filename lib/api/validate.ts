// validateSwarm: is this object a Swarm we can act on? Pure; called for every
// event on the hot path, so the schema is compiled once, at module load.
import { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { FormatsPlugin } from 'ajv-formats';
import { problemsFrom } from './problems.js';
import { ACKNOWLEDGES_LABEL, ACKNOWLEDGES_VALUE } from '../workerconfig/acknowledgement.js';
import { KUBERNETES_KEYWORDS, LIMITS, POOL_RULES, SPEC_RULES, swarmSchema } from './schema.js';
import { API_VERSION, KIND } from './types.js';
import { FAILOVER_KEY } from '../workerconfig/failover.js';
import type { ValidSwarm } from './types.js';

export type SwarmValidation = { ok: true; swarm: ValidSwarm } | { ok: false; problems: string[] };

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsPlugin as unknown as { default?: FormatsPlugin }).default ?? addFormatsPlugin) as FormatsPlugin;

const ajv = new Ajv({ allErrors: true, verbose: true, useDefaults: true, keywords: [...KUBERNETES_KEYWORDS] });
addFormats(ajv, ['date-time']);
const check = ajv.compile(swarmSchema);

/** How many duplicate names to spell out before summarising. */
const MAX_NAMED_DUPLICATES = 10;

function capped(problems: string[]): string[] {
  if (problems.length <= LIMITS.problemsListed) return problems;
  return [...problems.slice(0, LIMITS.problemsListed - 1), `… and ${problems.length - LIMITS.problemsListed + 1} more problems`];
}

export function validateSwarm(obj: unknown): SwarmValidation {
  // ajv applies defaults in place; the caller's object stays untouched.
  const candidate: unknown = copyOf(obj);
  if (!check(candidate)) return { ok: false, problems: capped(problemsFrom(check.errors)) };
  // The schema's defaults (lib/api/schema.ts DEFAULTS) were applied by ajv above.
  const swarm = candidate as ValidSwarm;
  const problems: string[] = [];
  if (swarm.apiVersion !== API_VERSION) problems.push(`apiVersion: must be ${API_VERSION}`);
  if (swarm.kind !== KIND) problems.push(`kind: must be ${KIND}`);
  problems.push(...specRuleProblems(swarm.spec));
  const duplicates = duplicateJobNames(swarm.spec.workload.jobs.map((j) => (typeof j === 'string' ? j : j.name)));
  if (duplicates.length > 0) problems.push(describeDuplicates(duplicates));
  return problems.length > 0 ? { ok: false, problems } : { ok: true, swarm };
}

/**
 * A deep copy of decoded JSON (what an event or the API gives): objects and arrays copied member by member, about
 * eight times faster than structuredClone on a Swarm, once per event. Anything else (a Date, a Map) is structuredClone's.
 */
function copyOf(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyOf);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const member = copyOf((value as Record<string, unknown>)[key]);
    // A member named "__proto__" stays an own key (an assignment would set the copy's prototype).
    if (key === '__proto__') Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
    else copy[key] = member;
  }
  return copy;
}

/** The CRD's spec-level CEL rules (SPEC_RULES) that need no previous object, checked here alike. */
function specRuleProblems(spec: ValidSwarm['spec']): string[] {
  const problems: string[] = [];
  if ((spec.statefulSetName === undefined) === (spec.deploymentName === undefined)) problems.push(`spec: ${SPEC_RULES.onePool.message}`);
  if (spec.deploymentName !== undefined && spec.restart.policy !== 'None') problems.push(`spec: ${SPEC_RULES.deploymentHotReloads.message}`);
  if (spec.restart.policy === 'Restart' && spec.restart.handoff !== 'BreakBeforeMake') problems.push(`spec: ${SPEC_RULES.restartBreaksFirst.message}`);
  if (spec.failover && spec.restart.policy !== 'None') problems.push(`spec: ${SPEC_RULES.failoverHotReloads.message}`);
  if (spec.failover && spec.configKey === FAILOVER_KEY) problems.push(`spec: ${SPEC_RULES.failoverKeyFree.message}`);
  return problems;
}

/**
 * The rules over a valid spec and its pool (POOL_RULES): the one the Swarm
 * breaks, if any. `templateLabels`: the pool's pod template labels; absent
 * (a view built by hand), nothing is judged.
 */
export function poolRuleProblem(
  spec: ValidSwarm['spec'],
  templateLabels: Readonly<Record<string, string>> | undefined,
): { reason: (typeof POOL_RULES)[keyof typeof POOL_RULES]['reason']; message: string } | undefined {
  if (!templateLabels) return undefined;
  const rule = POOL_RULES.hotReloadAcknowledges;
  if (spec.restart.policy === 'None' && templateLabels[ACKNOWLEDGES_LABEL] !== ACKNOWLEDGES_VALUE) return { reason: rule.reason, message: rule.message };
  return undefined;
}

interface Duplicate {
  name: string;
  indices: number[];
}

function duplicateJobNames(names: readonly string[]): Duplicate[] {
  // The common case, no duplicate, without an array per name.
  if (new Set(names).size === names.length) return [];
  const seen = new Map<string, number[]>();
  names.forEach((name, index) => seen.set(name, [...(seen.get(name) ?? []), index]));
  return [...seen].filter(([, indices]) => indices.length > 1).map(([name, indices]) => ({ name, indices }));
}

function describeDuplicates(duplicates: readonly Duplicate[]): string {
  const named = duplicates
    .slice(0, MAX_NAMED_DUPLICATES)
    .map((d) => `${JSON.stringify(d.name)} at ${d.indices.map((i) => `[${i}]`).join(', ')}`);
  const more = duplicates.length > MAX_NAMED_DUPLICATES ? ` and ${duplicates.length - MAX_NAMED_DUPLICATES} more` : '';
  return `spec.workload.jobs: duplicate job names: ${named.join('; ')}${more}`;
}
