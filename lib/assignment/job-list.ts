// Job lists as users write them: one name per line (blank lines and `#`
// comments ignored), or a YAML list of names and {name, weight?, dedicated?}.
import { parseDocument } from 'yaml';
import { AssignmentInputError } from './errors.js';
import { toJob } from './jobs.js';
import type { JobSpec } from './types.js';

export function parseJobList(text: string, source = 'jobs'): JobSpec[] {
  const lines = text.split(/\r?\n/);
  const first = lines.find((line) => line.trim() !== '' && !line.trim().startsWith('#'));
  if (first === undefined) return [];
  if (/^\s*(-(\s|$)|\[)/.test(first)) return parseYamlList(text, source);
  const jobs: string[] = [];
  lines.forEach((line) => {
    const name = line.trim();
    if (name !== '' && !name.startsWith('#')) jobs.push(name);
  });
  return jobs;
}

function parseYamlList(text: string, source: string): JobSpec[] {
  const doc = parseDocument(text, { prettyErrors: false });
  const at = (offset: number | undefined): string => {
    if (offset === undefined) return source;
    const line = text.slice(0, offset).split('\n').length;
    return `${source}:${line}`;
  };
  if (doc.errors.length > 0) {
    const error = doc.errors[0]!;
    throw new AssignmentInputError(`${at(error.pos[0])}: invalid YAML: ${error.message.split('\n')[0]}`);
  }
  let value: unknown;
  try {
    // toJS expands aliases; past the yaml package's maxAliasCount (100) it refuses (an alias bomb).
    value = doc.toJS();
  } catch (error) {
    throw new AssignmentInputError(`${source}: invalid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(value)) throw new AssignmentInputError(`${source}: expected a YAML list of jobs`);
  const items = (doc.contents as { items?: Array<{ range?: [number, number, number] }> }).items ?? [];
  return value.map((spec: unknown, i) => {
    try {
      return toJob(spec as JobSpec, i);
    } catch (error) {
      throw new AssignmentInputError(`${at(items[i]?.range?.[0])}: ${(error as Error).message}`);
    }
  });
}
