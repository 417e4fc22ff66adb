// bench:coverage's pure parts: when a step is over (the workers run what the
// system assigned), what that assignment leaves uncovered or doubled at rest,
// and the tables. No I/O: bench/coverage.ts measures, these read the numbers.

/** Pod name → its jobs, as a config.yml assigns them. */
export type Assignment = Readonly<Record<string, readonly string[]>>;

/** `<sts>-0` … `<sts>-(replicas-1)`. */
export function podNames(replicas: number, statefulSetName = 'swarm-worker'): string[] {
  return Array.from({ length: replicas }, (_, i) => `${statefulSetName}-${i}`);
}

const sameJobs = (a: readonly string[], b: readonly string[]): boolean => {
  const x = [...a].sort();
  const y = [...b].sort();
  return x.length === y.length && x.every((job, i) => job === y[i]);
};

/**
 * Whether the workers run exactly what `assignment` gives each of `pods`, by
 * their own reports (`running`: pod name → jobs; two incarnations of one name
 * both running a job list it twice, which does not match): the assignment
 * names exactly those pods, each runs its share, nothing else runs. For an
 * exact assignment (Swarm's) this is "every job run exactly once"; for one
 * that doubles or drops jobs (the original's chunking) it is the system's own
 * end state, defects included.
 */
export function runsAssignment(running: Readonly<Record<string, readonly string[]>>, assignment: Assignment, pods: readonly string[]): boolean {
  const assigned = Object.keys(assignment).sort();
  const wanted = [...pods].sort();
  if (assigned.length !== wanted.length || assigned.some((pod, i) => pod !== wanted[i])) return false;
  for (const [pod, jobs] of Object.entries(running)) if (jobs.length > 0 && !(pod in assignment)) return false;
  return wanted.every((pod) => sameJobs(running[pod] ?? [], assignment[pod] ?? []));
}

/** Jobs of `jobs` the assignment gives to no worker, and those it gives to two or more: its defects at rest. */
export function assignmentDefects(assignment: Assignment, jobs: readonly string[]): { onNone: string[]; onSeveral: string[] } {
  const owners = new Map<string, number>();
  for (const share of Object.values(assignment)) for (const job of share) owners.set(job, (owners.get(job) ?? 0) + 1);
  return {
    onNone: jobs.filter((job) => !owners.has(job)),
    onSeveral: jobs.filter((job) => (owners.get(job) ?? 0) > 1),
  };
}

export interface StepResult {
  readonly step: string;
  /** The pool's creation, one resize of the script, or a pod crash-looping (its container killed as it runs). */
  readonly kind: 'start' | 'resize' | 'crash';
  readonly replicas: number;
  /** The config.yml version the step ended at. */
  readonly version: number | undefined;
  /** Seconds from the command until the ConfigMap held the version the step ended at. */
  readonly configWrittenS: number | undefined;
  /** Seconds from the command to the Swarm's status Running at the new version with every pod Ready (Swarm only). */
  readonly statusConvergedS: number | undefined;
  /** Seconds from the command until the workers, by their own reports, ran what the ConfigMap assigns. */
  readonly workersConvergedS: number | undefined;
  readonly uncoveredJobSeconds: number;
  readonly jobsUncovered: number;
  readonly longestGapS: number;
  readonly duplicateJobSeconds: number;
  readonly jobsDuplicated: number;
  /** Pods deleted and replaced during the step (same name, new uid). */
  readonly podsRestarted: number;
  /** Pods deleted by the scale-down itself (name beyond the new replica count). */
  readonly podsRemoved: number;
  /** Of the final assignment: jobs it gives no worker, and jobs it gives two or more. */
  readonly assignedToNone: number;
  readonly assignedToSeveral: number;
  readonly anomalies: number;
  readonly misses: number;
}

export const fmt = (s: number | undefined): string => (s === undefined ? '—' : s.toFixed(1));

type Summed = 'uncoveredJobSeconds' | 'duplicateJobSeconds' | 'podsRestarted';

/** Σ of `key` over the scaling steps (the resizes: not the start, not a crash). */
export function scalingTotal(results: readonly StepResult[], key: Summed): number {
  return results.filter((r) => r.kind === 'resize').reduce((sum, r) => sum + r[key], 0);
}

/** One system's steps as a Markdown table. */
export function stepsTable(results: readonly StepResult[], options: { status: boolean }): string[] {
  const statusHead = options.status ? ' status converged (s) |' : '';
  const statusRule = options.status ? '---:|' : '';
  return [
    `| step | config version | config written (s) |${statusHead} workers converged (s) | uncovered job-s | jobs uncovered | longest gap (s) | duplicate job-s | jobs duplicated | pods restarted | pods removed | assigned to none / to two+ at rest |`,
    `|---|---:|---:|${statusRule}---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...results.map(
      (r) =>
        `| ${r.step} | ${r.version ?? '—'} | ${fmt(r.configWrittenS)} |${options.status ? ` ${fmt(r.statusConvergedS)} |` : ''} ${fmt(r.workersConvergedS)} | ${r.uncoveredJobSeconds.toFixed(1)} | ${r.jobsUncovered} | ${r.longestGapS.toFixed(1)} | ${r.duplicateJobSeconds.toFixed(1)} | ${r.jobsDuplicated} | ${r.podsRestarted} | ${r.podsRemoved} | ${r.assignedToNone} / ${r.assignedToSeveral} |`,
    ),
  ];
}

/** Two systems' runs of the same script, step by step, side by side. */
export function sideBySideTable(names: readonly string[], runs: ReadonlyArray<readonly StepResult[]>): string[] {
  const steps = (runs[0] ?? []).filter((r) => r.kind !== 'crash').map((r) => r.step);
  const crashes = (runs[0] ?? []).filter((r) => r.kind === 'crash').map((r) => r.step);
  const cells = (step: string, cell: (r: StepResult) => string) =>
    runs.map((results) => {
      const r = results.find((other) => other.step === step);
      return r ? cell(r) : '—';
    });
  const total = (results: readonly StepResult[], key: Summed) => (key === 'podsRestarted' ? String(scalingTotal(results, key)) : scalingTotal(results, key).toFixed(1));
  const group = (title: string) => names.map((n, i) => (i === 0 ? `${title}: ${n}` : n));
  const row = (step: string) =>
    [
      step,
      ...cells(step, (t) => fmt(t.workersConvergedS)),
      ...cells(step, (t) => t.uncoveredJobSeconds.toFixed(1)),
      ...cells(step, (t) => t.duplicateJobSeconds.toFixed(1)),
      ...cells(step, (t) => String(t.podsRestarted)),
    ].join(' | ');
  const totals = (['uncoveredJobSeconds', 'duplicateJobSeconds', 'podsRestarted'] as const).flatMap((key) => runs.map((r) => total(r, key)));
  return [
    `| ${['step', ...group('workers converged (s)'), ...group('uncovered job-s'), ...group('duplicate job-s'), ...group('pods restarted')].join(' | ')} |`,
    `|---|${Array(names.length * 4).fill('---:').join('|')}|`,
    ...steps.map((step) => `| ${row(step)} |`),
    `| ${['scaling steps (after the start)', ...names.map(() => ''), ...totals].join(' | ')} |`.replace(/ {2}/g, ' '),
    // After the totals: a crash is not a resize.
    ...crashes.map((step) => `| ${row(step)} |`),
  ];
}
