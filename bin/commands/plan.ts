// swarm plan: the moves, lower bound and restart order of a resize or job change.
import { assign, lowerBound, type Assignment, type JobSpec } from '../../lib/assignment/index.js';
import { diff, restartOrder } from '../../lib/plan/index.js';
import { CliError } from './cli-error.js';
import { guard, parseFlags, processIo, readConfig, readJobs, replicaCount, requireFlag, statefulSetFlag, type Io } from './assign.js';

const USAGE =
  'usage: swarm plan --statefulset NAME --replicas M (--previous FILE | --from N) [--jobs FILE] [--json]';

export async function run(argv: string[], io: Io = processIo): Promise<number> {
  const flags = parseFlags(
    argv,
    { statefulset: 'value', replicas: 'value', previous: 'value', from: 'value', jobs: 'value', json: 'switch', help: 'switch' },
    USAGE,
  );
  if (flags.help) {
    io.stdout(USAGE + '\n');
    return 0;
  }
  const statefulSetName = statefulSetFlag(flags, USAGE);
  const replicas = replicaCount(requireFlag(flags, 'replicas', USAGE), '--replicas');
  if ((flags.previous === undefined) === (flags.from === undefined)) throw new CliError(`give exactly one of --previous FILE or --from N (${USAGE})`);

  let previous: Assignment;
  let jobs: JobSpec[];
  if (flags.previous !== undefined) {
    const config = await readConfig(flags.previous);
    previous = Object.fromEntries(Object.entries(config.workloads).map(([w, s]) => [w, s.jobs]));
    // Without --jobs the job set is the previous one: a pure resize.
    jobs = flags.jobs === undefined ? Object.values(previous).flat() : await readJobs(flags.jobs, io);
    if (flags.jobs === undefined) jobs = [...new Set(jobs as string[])];
  } else {
    const from = replicaCount(flags.from!, '--from');
    jobs = await readJobs(flags.jobs, io);
    previous = guard(() => assign({ statefulSetName, replicas: from, jobs })).assignment;
  }
  const result = guard(() => assign({ statefulSetName, replicas, jobs, previous }));
  const bound = guard(() => lowerBound({ statefulSetName, replicas, jobs, previous }));
  const change = diff(previous, result.assignment);
  // Under restart policy Restart, which restarts break first (lib/plan/restart-order.ts).
  const steps = restartOrder(change);

  if (flags.json) {
    const report = {
      statefulSetName,
      replicas,
      moved: change.moved,
      lowerBound: bound ?? null,
      moves: change.moves,
      changedWorkers: change.changedWorkers,
      addedWorkers: change.addedWorkers,
      removedWorkers: change.removedWorkers,
      restartOrder: steps,
      unhonouredDedications: result.unhonouredDedications,
    };
    io.stdout(JSON.stringify(report, null, 2) + '\n');
    return 0;
  }
  const lines: string[] = [];
  const boundText = bound === undefined ? 'n/a (dedicated jobs)' : `${bound.moves}${bound.exact ? '' : ' (weighted relaxation)'}`;
  lines.push(`moved jobs: ${change.moved} (lower bound ${boundText})`);
  for (const { job, from, to } of change.moves) lines.push(`  ${job}: ${from ?? '(new)'} -> ${to ?? '(removed)'}`);
  if (change.addedWorkers.length > 0) lines.push(`added workers (created by the StatefulSet): ${change.addedWorkers.join(', ')}`);
  if (change.removedWorkers.length > 0) lines.push(`removed workers (deleted by the StatefulSet): ${change.removedWorkers.join(', ')}`);
  lines.push(`restart order (policy Restart, break-before-make):${steps.length === 0 ? ' nothing to restart' : ''}`);
  steps.forEach((step, k) => lines.push(`  ${k + 1}. ${step.worker}${step.waitFor.length > 0 ? ` after ${step.waitFor.join(', ')}` : ''}`));
  for (const { job, reason } of result.unhonouredDedications) lines.push(`unhonoured dedication: ${job}: ${reason}`);
  io.stdout(lines.join('\n') + '\n');
  return 0;
}
