// Questions to a conformance harness (health, readiness, mayAct: its JSON
// lines, sdk/conformance/README.md) and their answers, at most one unanswered
// question of each kind at a time: a frozen harness answers them all when it
// resumes, and a flood of stale answers would read as fresh ones.
import { sleep, until } from './wait.js';

type Event = Record<string, unknown>;

export function questions(events: readonly Event[], send: (command: object) => void, describe: () => string) {
  /** Questions sent, by kind. */
  const asked = new Map<string, number>();

  /** Ask the harness once (`cmd`, none unanswered before) and wait for its answer. */
  async function next(at: string, cmd: string): Promise<Record<string, unknown>> {
    const answers = () => events.filter((e) => e.event === cmd);
    await until(`${at}: every ${cmd} answered`, () => (answers().length >= (asked.get(cmd) ?? 0) ? true : undefined), describe);
    const before = answers().length;
    asked.set(cmd, before + 1);
    send({ cmd });
    return until(`${at}: a ${cmd} answer`, () => answers()[before], describe);
  }

  /** One readiness probe (readiness-probe.ts): none is sent while one is unanswered, which fails this one too. */
  async function probeOnce(timeoutMs: number): Promise<boolean> {
    const answers = () => events.filter((e) => e.event === 'readiness');
    const before = answers().length;
    const unanswered = before < (asked.get('readiness') ?? 0);
    if (!unanswered) {
      asked.set('readiness', before + 1);
      send({ cmd: 'readiness' });
    }
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!unanswered && answers().length > before) return answers()[before]!.ready === true;
      await sleep(20);
    }
    return false;
  }

  /** Ask the harness (`cmd`) until its answer's `field` is `want`. */
  async function ask(at: string, cmd: string, field: string, want: boolean): Promise<void> {
    const answers = () => events.filter((e) => e.event === cmd);
    const before = answers().length;
    await until(
      `${at}: ${cmd} ${want}`,
      () => {
        const all = answers();
        if (all.length > before && all.at(-1)![field] === want) return true;
        if (all.length >= (asked.get(cmd) ?? 0)) {
          asked.set(cmd, (asked.get(cmd) ?? 0) + 1);
          send({ cmd });
        }
        return undefined;
      },
      describe,
    );
  }

  /** The harness restarted: a question the killed process never answered is not waited for. */
  function forgetUnanswered(): void {
    for (const cmd of asked.keys()) asked.set(cmd, events.filter((e) => e.event === cmd).length);
  }

  return { ask, next, probeOnce, forgetUnanswered };
}
