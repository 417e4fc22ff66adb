// Drives one SDK's conformance harness through one scenario: writes config.yml
// as the kubelet does, changes the API objects, signals the process, and
// checks the callbacks it reports and the Lease it writes on a real API server.
// For protocol 2 it also cuts the harness off from the API server (a relay,
// partition.ts), freezes its process (SIGSTOP), restarts it (a new process of
// the same pod), and watches its heartbeat.
import * as k8s from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWorker } from '../../../lib/assignment/workers.js';
import { FAILOVER_KEY, minimumProbeWindowSeconds, render, renderFailover, VERSION_ANNOTATION, type FailoverSettings } from '../../../lib/workerconfig/index.js';
import { clearVolume, writeVolume } from './config-dir.js';
import { startHarness } from './harness-process.js';
import { expiryOf, heartbeatMismatch, watchHeartbeat } from './heartbeat-watch.js';
import { leaseMismatch } from './lease-check.js';
import { relay } from './partition.js';
import { questions } from './questions.js';
import { probeUntilNotReady } from './readiness-probe.js';
import { deleteNamespace, prepareNamespace, putConfigMap, type ApiServer, type Prepared } from './namespace.js';
import type { Scenario, Step } from './scenario.js';
import { sleep, until, WAIT_MS } from './wait.js';

export interface Harness {
  readonly sdk: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** The harness's deadlines: short, so overruns happen within a step's wait. */
const DEADLINE_MS = 1500;

/** A callback the harness reported, and when the runner read the line (ms, wall clock). */
type Call = { event: 'start' | 'stop'; job: string; at: number };
interface LeaseState {
  lease: k8s.V1Lease;
}

export async function runScenario(api: ApiServer, scenario: Scenario, harness: Harness): Promise<void> {
  const label = `${harness.sdk}-${scenario.name}`.replace(/[^a-z0-9-]/g, '-').slice(0, 40);
  const cleanups: (() => unknown)[] = [];
  try {
    // The pod's uid, known before the namespace is prepared: a Lease left there may be this pod's own (holder `own`).
    const uid = randomUUID();
    const prepared = await prepareNamespace(api, scenario, label, uid);
    cleanups.push(() => deleteNamespace(api, prepared.namespace));
    await driveScenario(api, scenario, harness, prepared, cleanups, uid);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

async function driveScenario(api: ApiServer, scenario: Scenario, harness: Harness, { namespace, token }: Prepared, cleanups: (() => unknown)[], uid: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-conformance-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const began = Date.now();
  const pool = parseWorker(scenario.pod)?.statefulSet ?? scenario.pod;
  const protocol = String(scenario.protocol ?? 1);
  /** The files of the mounted volume now: each update writes them all, as the kubelet does. */
  let files: Record<string, string> = {};
  const writeFiles = (changed: Record<string, string>) => writeVolume(volume, (files = { ...files, ...changed }));
  const network = await relay(api.host, api.port);
  cleanups.push(() => network.close());
  const heartbeats = await watchHeartbeat(api.kc, namespace, scenario.pod);
  cleanups.push(() => heartbeats.abort());
  let matchedHeartbeat = -1;
  /** The failover.yml last written whole (a garbled one changes nothing in force, W25). */
  let failover: FailoverSettings | undefined;
  const saDir = join(dir, 'serviceaccount');
  const volume = join(dir, 'config');
  mkdirSync(saDir);
  mkdirSync(volume);
  writeFileSync(join(saDir, 'token'), token);
  writeFileSync(join(saDir, 'ca.crt'), api.ca);
  writeFileSync(join(saDir, 'namespace'), namespace);

  const leases: LeaseState[] = [];
  let watchError: unknown;
  const watch = await new k8s.Watch(api.kc).watch(
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
    { fieldSelector: `metadata.name=${scenario.pod}` },
    (phase, lease: k8s.V1Lease) => {
      if (phase === 'ADDED' || phase === 'MODIFIED') leases.push({ lease });
    },
    (err) => (watchError = err),
  );
  cleanups.push(() => watch.abort());
  // A Lease the scenario made before the worker started is not the worker's.
  const preexisting = scenario.api?.lease ? 1 : 0;
  await until('the Lease watch', () => (leases.length >= preexisting ? true : undefined), () => '');

  const child = startHarness(harness, {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...harness.env,
    POD_NAME: scenario.pod,
    POD_UID: uid,
    POD_NAMESPACE: namespace,
    CONFIG_PATH: join(volume, 'config.yml'),
    KUBERNETES_SERVICE_HOST: api.host,
    KUBERNETES_SERVICE_PORT: String(network.port),
    SWARM_HARNESS_SERVICEACCOUNT_DIR: saDir,
    SWARM_HARNESS_START_DEADLINE_MS: String(DEADLINE_MS),
    SWARM_HARNESS_STOP_DEADLINE_MS: String(DEADLINE_MS),
    ...scenario.env,
  });
  cleanups.push(() => child.close());
  const { events, send } = child;

  const calls = (): Call[] => events.filter((e): e is Call => e.event === 'start' || e.event === 'stop');
  let consumed = 0;
  let matchedLease = preexisting - 1;
  const describe = () =>
    [
      `harness ${harness.sdk}, scenario ${scenario.name}, namespace ${namespace}`,
      `calls: ${calls().map((c, i) => `${i < consumed ? '' : '*'}${c.event} ${c.job}`).join(', ') || '(none)'} (* not yet expected)`,
      `lease states: ${leases.map((l) => `${l.lease.metadata?.annotations?.[VERSION_ANNOTATION]}/${l.lease.spec?.holderIdentity === uid ? 'own' : 'other'}`).join(', ') || '(none)'}`,
      `heartbeat renewals: ${heartbeats.states.length}`,
      `exit: ${child.exit() ? JSON.stringify(child.exit()) : 'running'}${watchError ? `; lease watch ended: ${String(watchError)}` : ''}${heartbeats.error() ? `; heartbeat watch ended: ${String(heartbeats.error())}` : ''}`,
      `stderr (tail):\n${child.stderr().slice(-3000)}`,
    ].join('\n');
  const check = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`${what}\n${describe()}`);
  };
  const { ask, next, probeOnce, forgetUnanswered } = questions(events, send, describe);

  async function step(s: Step, index: number): Promise<void> {
    const at = `step ${index + 1} (${Object.keys(s)[0]})`;
    if ('run' in s) send({ cmd: 'run' });
    else if ('config' in s) writeFiles({ 'config.yml': render(s.config) });
    else if ('configText' in s) writeFiles({ 'config.yml': s.configText });
    else if ('failover' in s) {
      failover = s.failover;
      writeFiles({ [FAILOVER_KEY]: renderFailover(s.failover) });
    }
    else if ('failoverText' in s) writeFiles({ [FAILOVER_KEY]: s.failoverText });
    else if ('removeConfig' in s) {
      clearVolume(volume, 'config.yml');
      files = {};
    } else if ('partition' in s) network.cut();
    else if ('heal' in s) network.heal();
    else if ('freeze' in s) child.signal('SIGSTOP');
    else if ('thaw' in s) child.signal('SIGCONT');
    else if ('restart' in s) {
      const readies = child.readies();
      await child.restart();
      forgetUnanswered();
      await until(`${at}: the new process to be ready`, () => (child.readies() > readies ? true : undefined), describe);
    }
    else if ('configMap' in s) await putConfigMap(api, namespace, s.configMap, scenario.api?.handover === true);
    else if ('hold' in s || 'release' in s || 'fail' in s) {
      const [cmd, target] = Object.entries(s)[0] as [string, { start?: string; stop?: string }];
      for (const [callback, job] of Object.entries(target)) send({ cmd, callback, job });
    } else if ('sick' in s) send({ cmd: 'sick', job: s.sick });
    else if ('well' in s) send({ cmd: 'well', job: s.well });
    else if ('settle' in s) await sleep(s.settle * 1000);
    else if ('sigterm' in s) child.signal('SIGTERM');
    else if ('calls' in s) {
      const want = [...(s.calls.stop ?? []).map((job) => `stop ${job}`), ...(s.calls.start ?? []).map((job) => `start ${job}`)].sort();
      const got = await until(
        `${at}: calls ${want.join(', ') || 'none'}`,
        () => {
          const fresh = calls().slice(consumed).map((c) => `${c.event} ${c.job}`);
          const sorted = [...fresh].sort();
          const extra = sorted.filter((c, i) => sorted.indexOf(c) === i && sorted.filter((x) => x === c).length > want.filter((x) => x === c).length);
          if (extra.length) throw new Error(`${at}: unexpected calls ${extra.join(', ')} (expected ${want.join(', ') || 'none'})\n${describe()}`);
          return sorted.length === want.length ? fresh : undefined;
        },
        describe,
      );
      const firstStart = got.findIndex((c) => c.startsWith('start '));
      check(firstStart === -1 || got.slice(firstStart).every((c) => c.startsWith('start ')), `${at}: a start came before a stop (W8): ${got.join(', ')}`);
      if (s.calls.withinLease) {
        // Each call reported while the heartbeat, as last renewed before it, had not expired (W26).
        for (const call of calls().slice(consumed, consumed + got.length)) {
          const renewed = heartbeats.states.filter((h) => h.seenAt <= call.at).at(-1);
          const expiry = renewed && expiryOf(renewed.lease);
          check(expiry !== undefined && call.at < expiry, `${at}: ${call.event} ${call.job} at ${new Date(call.at).toISOString()}, the heartbeat expired at ${expiry === undefined ? '(none)' : new Date(expiry).toISOString()}`);
        }
      }
      consumed += got.length;
    } else if ('lease' in s || 'leaseNow' in s) {
      const expected = 'lease' in s ? s.lease : s.leaseNow;
      const mine = (i: number) => leaseMismatch(leases[i]!.lease, expected, { uid, pool, protocol, began });
      if ('leaseNow' in s) {
        const last = leases.length - 1;
        check(last > matchedLease || last === matchedLease, `${at}: no Lease`);
        const wrong = last >= 0 ? mine(last) : 'no Lease';
        check(wrong === undefined, `${at}: the Lease now: ${wrong}`);
        matchedLease = last;
      } else {
        matchedLease = await until(
          `${at}: the Lease to say version ${expected.version}, [${expected.jobs.join(', ')}]`,
          () => {
            for (let i = matchedLease + 1; i < leases.length; i++) if (mine(i) === undefined) return i;
            return undefined;
          },
          () => `${describe()}\nlast mismatch: ${leases.length ? mine(leases.length - 1) : 'no Lease'}`,
        );
      }
    } else if ('leaseUnchanged' in s) check(leases.length - 1 === matchedLease, `${at}: the Lease was written again (W12)`);
    else if ('noLease' in s) check(leases.length === preexisting, `${at}: a Lease was written`);
    else if ('health' in s) await ask(at, 'health', 'healthy', s.health);
    else if ('readiness' in s) await ask(at, 'readiness', 'ready', s.readiness);
    else if ('mayAct' in s) await ask(at, 'mayAct', 'mayAct', s.mayAct);
    else if ('mayActNow' in s) {
      const answer = await next(at, 'mayAct');
      check(answer.mayAct === s.mayActNow, `${at}: the first answer was mayAct ${String(answer.mayAct)}`);
    } else if ('probe' in s) {
      // W30 sizes the probe by the lease in force: a scenario's probe must be one the rule allows.
      const least = failover && minimumProbeWindowSeconds(failover.leaseSeconds);
      const window = (s.probe.failureThreshold - 1) * s.probe.periodSeconds;
      check(least !== undefined && window >= least, `${at}: a probe window of ${window} s; W30 asks at least ${least?.toFixed(2) ?? '(no failover.yml)'} s`);
      await probeUntilNotReady(s.probe, probeOnce, WAIT_MS);
    }
    else if ('heartbeat' in s) {
      // Two renewals since the last one matched, each with the published lease length (W25).
      const mismatch = (i: number) => heartbeatMismatch(heartbeats.states[i]!.lease, s.heartbeat.leaseSeconds, { uid, pool });
      for (let n = 0; n < 2; n++) {
        matchedHeartbeat = await until(
          `${at}: a heartbeat renewal with leaseDurationSeconds ${s.heartbeat.leaseSeconds}`,
          () => {
            for (let i = matchedHeartbeat + 1; i < heartbeats.states.length; i++) if (mismatch(i) === undefined) return i;
            return undefined;
          },
          () => `${describe()}\nlast mismatch: ${heartbeats.states.length ? mismatch(heartbeats.states.length - 1) : 'no heartbeat Lease'}`,
        );
      }
    } else if ('noRenewal' in s) {
      const before = heartbeats.states.length;
      await sleep(s.noRenewal * 1000);
      check(heartbeats.states.length === before, `${at}: the heartbeat was renewed (${heartbeats.states.length - before} times in ${s.noRenewal} s)`);
      matchedHeartbeat = heartbeats.states.length - 1;
    } else if ('exit' in s) {
      const done = await until(`${at}: exit ${s.exit}`, () => child.exit(), describe);
      check(done.code === s.exit, `${at}: exited ${JSON.stringify(done)}, want ${s.exit}`);
    }
  }

  await until(
    'the harness to be ready',
    () => {
      if (child.exit()) throw new Error(`the harness exited\n${describe()}`);
      return events.some((e) => e.event === 'ready') ? true : undefined;
    },
    describe,
  );
  for (const [index, s] of scenario.steps.entries()) await step(s, index);
  check(calls().length === consumed, 'calls after the last expected ones');
}
