// The simulated workers' config.yml parser: the production parser, remembered
// by text. Every worker re-reads the same few versions of config.yml (each
// reload, each 500 ms poll of a draining worker), and a parse is a pure
// function of the text, so a remembered answer (frozen: a reader that mutates
// it fails loudly) is what a fresh parse would give; so is a refusal.
import { parse, type WorkerConfig } from '../../lib/workerconfig/index.js';
import { deepFreeze } from './frozen.js';

/** Distinct texts kept (a run has a few hundred versions; the live ones are the latest few). */
const KEPT = 64;

const remembered = new Map<string, { config: WorkerConfig } | { error: unknown }>();

export function parseRemembered(text: string): WorkerConfig {
  let answer = remembered.get(text);
  if (!answer) {
    try {
      answer = { config: deepFreeze(parse(text)) };
    } catch (error) {
      answer = { error };
    }
    if (remembered.size >= KEPT) remembered.delete(remembered.keys().next().value!);
    remembered.set(text, answer);
  }
  if ('error' in answer) throw answer.error;
  return answer.config;
}
