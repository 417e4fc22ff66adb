// swarm event send --to URL --type add|update|delete -f OBJECT.yaml [--mode resource|reference] [--structured]
// Sends one synthetic ApiServerSource CloudEvent, shaped like the real adapter's
// (like `kn event send`, but for this event source), and prints the answer.
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { apiServerEvent, DEFAULT_APISERVER_SOURCE, toHttpMessage } from '../../lib/events/apiserver-event.js';
import { checkKubeObject } from '../../lib/events/data.js';
import type { KubeObject, Mode, Verb } from '../../lib/events/types.js';
import { readText } from './assign.js';
import { CliError } from './cli-error.js';

const USAGE =
  'usage: swarm event send --to URL --type add|update|delete -f OBJECT.yaml [--mode resource|reference] [--structured] [--namespace NS] [--source URL]';

const VERBS: readonly Verb[] = ['add', 'update', 'delete'];
const MODES: Record<string, Mode> = { resource: 'resource', reference: 'ref', ref: 'ref' };

export interface SendOptions {
  to: URL;
  verb: Verb;
  mode: Mode;
  file: string;
  structured: boolean;
  namespace?: string;
  source: string;
}

export function parseSendArgs(argv: string[]): SendOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        to: { type: 'string' },
        type: { type: 'string' },
        file: { type: 'string', short: 'f' },
        mode: { type: 'string', default: 'resource' },
        structured: { type: 'boolean', default: false },
        namespace: { type: 'string', short: 'n' },
        source: { type: 'string', default: DEFAULT_APISERVER_SOURCE },
      },
    }));
  } catch (err) {
    throw new CliError(`${err instanceof Error ? err.message : String(err)} (swarm event --help)`);
  }
  if (!values.to) throw new CliError(`--to URL is required (swarm event --help)`);
  if (!values.type) throw new CliError(`--type add|update|delete is required (swarm event --help)`);
  if (!values.file) throw new CliError(`-f OBJECT.yaml is required (swarm event --help)`);
  if (!VERBS.includes(values.type as Verb)) throw new CliError(`--type must be add, update or delete, not ${JSON.stringify(values.type)}`);
  const mode = MODES[values.mode];
  if (!mode) throw new CliError(`--mode must be resource or reference, not ${JSON.stringify(values.mode)}`);
  let to: URL;
  try {
    to = new URL(values.to);
  } catch {
    throw new CliError(`--to ${JSON.stringify(values.to)} is not a URL`);
  }
  if (to.protocol !== 'http:' && to.protocol !== 'https:') throw new CliError(`--to must be an http(s) URL, not ${to.protocol}`);
  return {
    to,
    verb: values.type as Verb,
    mode,
    file: values.file,
    structured: values.structured,
    namespace: values.namespace,
    source: values.source,
  };
}

/** The object from the file; the namespace flag fills in (or must agree with) metadata.namespace. */
export function objectFromYaml(text: string, file: string, namespace?: string): KubeObject {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new CliError(`${file}: not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) {
    const metadata = (doc as { metadata?: Record<string, unknown> }).metadata;
    if (typeof metadata === 'object' && metadata !== null) {
      if (namespace !== undefined && metadata.namespace !== undefined && metadata.namespace !== namespace) {
        throw new CliError(`${file}: metadata.namespace is ${String(metadata.namespace)} but --namespace is ${namespace}`);
      }
      metadata.namespace ??= namespace ?? 'default';
    }
  }
  const checked = checkKubeObject(doc);
  if (!checked.ok) throw new CliError(`${file}: ${checked.problem}`);
  return checked.value;
}

async function send(options: SendOptions): Promise<number> {
  const text = await readText(options.file);
  const object = objectFromYaml(text, options.file, options.namespace);
  const event = apiServerEvent({ verb: options.verb, mode: options.mode, object, source: options.source });
  const message = toHttpMessage(event, options.structured);
  let response: Response;
  try {
    response = await fetch(options.to, { method: 'POST', headers: message.headers, body: message.body });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new CliError(`POST ${options.to.href} failed: ${cause ?? (err instanceof Error ? err.message : String(err))}`, 1);
  }
  const body = await response.text();
  process.stdout.write(`${response.status} ${response.statusText}\n${body}${body.endsWith('\n') || body === '' ? '' : '\n'}`);
  return response.ok ? 0 : 1;
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '-h' || sub === '--help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (sub !== 'send') throw new CliError(`${sub ? `unknown event subcommand "${sub}"` : "missing subcommand"} (usage: swarm event send --to URL --type add|update|delete -f OBJECT.yaml)`);
  return send(parseSendArgs(rest));
}
