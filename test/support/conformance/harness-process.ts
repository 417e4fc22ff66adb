// The harness as a process the runner drives: its JSON lines on stdout (kept
// across restarts, so the calls a scenario expects run on from one process of
// the pod to the next), its stderr tail, its exit, and a restart: the process
// killed (SIGKILL, as a liveness restart ends a hung or frozen container) and
// a new one started with the same environment, the same pod uid.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Harness } from './run-scenario.js';

export type Exit = { code: number | null; signal: string | null };

export interface HarnessProcess {
  /** Every line any process of this harness wrote, with when the runner read it (ms, wall clock). */
  readonly events: Record<string, unknown>[];
  stderr(): string;
  /** How the current process ended; undefined while it runs. */
  exit(): Exit | undefined;
  /** The `ready` lines seen so far (one per process started). */
  readies(): number;
  send(command: object): void;
  signal(signal: NodeJS.Signals): void;
  /** Kill the current process and start a new one; resolves once it has exited (the new one may not be ready yet). */
  restart(): Promise<void>;
  /** Kill the current process, if it still runs. */
  close(): void;
}

export function startHarness(harness: Harness, env: NodeJS.ProcessEnv): HarnessProcess {
  const events: Record<string, unknown>[] = [];
  let stderr = '';
  let child: ChildProcessWithoutNullStreams;
  let exit: Exit | undefined;
  let exited: Promise<void>;

  const launch = () => {
    const started = spawn(harness.command, [...harness.args], { cwd: harness.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    child = started;
    exit = undefined;
    started.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-6000)));
    createInterface({ input: started.stdout }).on('line', (line) => {
      try {
        events.push({ ...(JSON.parse(line) as Record<string, unknown>), at: Date.now() });
      } catch {
        stderr += `(stdout, not JSON) ${line}\n`;
      }
    });
    exited = new Promise((resolve) =>
      started.on('exit', (code, signal) => {
        if (child === started) exit = { code, signal };
        resolve();
      }),
    );
    started.stdin.on('error', () => undefined);
  };
  launch();

  return {
    events,
    stderr: () => stderr,
    exit: () => exit,
    readies: () => events.filter((e) => e.event === 'ready').length,
    send: (command) => void child.stdin.write(`${JSON.stringify(command)}\n`),
    signal: (signal) => void child.kill(signal),
    async restart() {
      stderr += '--- restarted (SIGKILL, a new process) ---\n';
      child.kill('SIGKILL');
      await exited;
      launch();
    },
    close: () => void (exit || child.kill('SIGKILL')),
  };
}
