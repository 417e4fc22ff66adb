// config.yml in: strict about shape, with line:column and field path in every error.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { DEFAULTS } from '../api/schema.js';
import type { WorkerConfig, WorkerShare } from './types.js';

export class WorkerConfigError extends Error {
  constructor(
    message: string,
    readonly line?: number,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'WorkerConfigError';
  }
}

export function parse(text: string, source: string = DEFAULTS.configKey): WorkerConfig {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const fail = (node: Node | null | undefined, field: string, problem: string): never => {
    const pos = node?.range ? lineCounter.linePos(node.range[0]) : undefined;
    const where = pos ? `${source}:${pos.line}:${pos.col}` : source;
    throw new WorkerConfigError(`${where}: ${field}: ${problem}`, pos?.line, field);
  };
  if (doc.errors.length > 0) {
    const error = doc.errors[0]!;
    const pos = lineCounter.linePos(error.pos[0]);
    throw new WorkerConfigError(`${source}:${pos.line}:${pos.col}: invalid YAML: ${error.message.split('\n')[0]}`, pos.line);
  }
  const root = doc.contents;
  if (!isMap(root)) return fail(root, '(document)', 'expected a mapping with "workloads" and "version"');

  let version: number | undefined;
  let workloads: Record<string, WorkerShare> | undefined;
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    const value = pair.value as Node | null;
    if (key === 'version') version = nonNegativeInteger(value, 'version', fail);
    else if (key === 'workloads') workloads = parseWorkloads(value, fail);
    else fail(pair.key as Node, String(key), 'unknown field (expected "workloads" and "version")');
  }
  if (workloads === undefined) return fail(root, 'workloads', 'missing');
  if (version === undefined) return fail(root, 'version', 'missing');
  return { version, workloads };
}

type Fail = (node: Node | null | undefined, field: string, problem: string) => never;

function parseWorkloads(node: Node | null, fail: Fail): Record<string, WorkerShare> {
  // `workloads: {}` and an empty `workloads:` (no workers yet) are both fine.
  if (node === null || (isScalar(node) && node.value === null)) return {};
  if (!isMap(node)) return fail(node, 'workloads', 'expected a mapping of worker name to {jobs, version}');
  // Entries, then Object.fromEntries: a worker named "__proto__" stays an own key.
  const workloads: Array<[string, WorkerShare]> = [];
  for (const pair of node.items) {
    const worker = isScalar(pair.key) && typeof pair.key.value === 'string' ? pair.key.value : undefined;
    if (worker === undefined || worker === '') return fail(pair.key as Node, 'workloads', 'worker names must be non-empty strings');
    const field = `workloads.${worker}`;
    const share = pair.value as Node | null;
    if (!isMap(share)) return fail(share ?? (pair.key as Node), field, 'expected a mapping with "jobs" and "version"');
    let jobs: string[] | undefined;
    let version: number | undefined;
    let releasing: string[] | undefined;
    let awaiting: string[] | undefined;
    let released: string[] | undefined;
    for (const entry of share.items) {
      const key = isScalar(entry.key) ? entry.key.value : undefined;
      const value = entry.value as Node | null;
      if (key === 'version') version = nonNegativeInteger(value, `${field}.version`, fail);
      else if (key === 'jobs') jobs = jobList(value, `${field}.jobs`, fail);
      else if (key === 'releasing') releasing = jobList(value, `${field}.releasing`, fail);
      else if (key === 'awaiting') awaiting = jobList(value, `${field}.awaiting`, fail);
      else if (key === 'released') released = jobList(value, `${field}.released`, fail);
      else fail(entry.key as Node, `${field}.${String(key)}`, 'unknown field (expected "jobs", "version", "releasing", "awaiting" and "released")');
    }
    if (jobs === undefined) return fail(share, `${field}.jobs`, 'missing');
    if (version === undefined) return fail(share, `${field}.version`, 'missing');
    const running = new Set(jobs);
    const notRunning = releasing?.find((j) => !running.has(j));
    if (notRunning !== undefined) return fail(share, `${field}.releasing`, `${JSON.stringify(notRunning)} is not in jobs`);
    const alreadyRunning = awaiting?.find((j) => running.has(j));
    if (alreadyRunning !== undefined) return fail(share, `${field}.awaiting`, `${JSON.stringify(alreadyRunning)} is already in jobs`);
    const stillListed = released?.find((j) => running.has(j));
    if (stillListed !== undefined) return fail(share, `${field}.released`, `${JSON.stringify(stillListed)} is still in jobs`);
    const marks = { ...(releasing?.length ? { releasing } : {}), ...(awaiting?.length ? { awaiting } : {}), ...(released?.length ? { released } : {}) };
    workloads.push([worker, { jobs, version, ...marks }]);
  }
  return Object.fromEntries(workloads);
}

function jobList(node: Node | null, field: string, fail: Fail): string[] {
  if (node === null || (isScalar(node) && node.value === null)) return [];
  if (!isSeq(node)) return fail(node, field, 'expected a list of job names');
  const seen = new Set<string>();
  return node.items.map((item, i) => {
    const value = isScalar(item) ? item.value : undefined;
    if (typeof value !== 'string' || value === '') return fail(item as Node, `${field}[${i}]`, 'expected a non-empty string');
    if (seen.has(value)) return fail(item as Node, `${field}[${i}]`, `duplicate job ${JSON.stringify(value)}`);
    seen.add(value);
    return value;
  });
}

function nonNegativeInteger(node: Node | null, field: string, fail: Fail): number {
  const value = isScalar(node) ? node.value : undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) return fail(node, field, 'expected a non-negative integer');
  return value;
}
