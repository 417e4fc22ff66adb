import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CliError } from '../../bin/commands/cli-error.js';
import { objectFromYaml, parseSendArgs, run } from '../../bin/commands/event.js';
import { fromHttp, toTrigger } from '../../lib/events/index.js';

// A real HTTP receiver on loopback that records what `swarm event send` posts
// and answers with whatever status the test asks for.
interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
}
let server: Server;
let url: string;
const received: Received[] = [];
let answer = { status: 202, body: '{"accepted":true}' };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  received.length = 0;
  answer = { status: 202, body: '{"accepted":true}' };
  vi.restoreAllMocks();
});

const dir = mkdtempSync(join(tmpdir(), 'swarm-cli-event-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
const podYaml = file(
  'pod.yaml',
  `apiVersion: v1
kind: Pod
metadata:
  name: worker-2
  namespace: team-a
  uid: 7d1e
  ownerReferences:
    - {apiVersion: apps/v1, kind: StatefulSet, name: worker, controller: true}
`,
);

function captureStdout(): () => string {
  const chunks: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  return () => chunks.join('');
}

describe('swarm event send', () => {
  it('posts an adapter-shaped binary event the receiver classifies, and prints the answer', async () => {
    const stdout = captureStdout();
    expect(await run(['send', '--to', url, '--type', 'update', '-f', podYaml])).toBe(0);
    expect(stdout()).toBe('202 Accepted\n{"accepted":true}\n');
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['ce-subject']).toBe('/apis/v1/namespaces/team-a/pods/worker-2');
    expect(request!.headers['ce-time']).toBeUndefined();
    expect(toTrigger(fromHttp(request!.headers, request!.body))).toMatchObject({
      source: 'apiserver', verb: 'update', mode: 'resource', kind: 'Pod', name: 'worker-2', uid: '7d1e', ownerStatefulSet: 'worker',
    });
  });

  it('sends reference mode, structured, when asked', async () => {
    captureStdout();
    expect(await run(['send', '--to', url, '--type', 'delete', '-f', podYaml, '--mode', 'reference', '--structured'])).toBe(0);
    const [request] = received;
    expect(request!.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
    expect(toTrigger(fromHttp(request!.headers, request!.body))).toEqual({
      source: 'apiserver', verb: 'delete', mode: 'ref', kind: 'Pod', apiVersion: 'v1', namespace: 'team-a', name: 'worker-2',
    });
  });

  it('exits non-zero on a non-2xx answer, still printing it', async () => {
    answer = { status: 422, body: '{"error":"unsupported kind"}' };
    const stdout = captureStdout();
    expect(await run(['send', '--to', url, '--type', 'add', '-f', podYaml])).toBe(1);
    expect(stdout()).toContain('422 Unprocessable Entity\n{"error":"unsupported kind"}');
  });

  it('fills in the namespace from --namespace, or default', () => {
    const text = 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: worker}\n';
    expect(objectFromYaml(text, 'sts.yaml', 'team-b').metadata.namespace).toBe('team-b');
    expect(objectFromYaml(text, 'sts.yaml').metadata.namespace).toBe('default');
  });

  it('fails with one line when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(run(['send', '--to', `http://127.0.0.1:${port}/`, '--type', 'add', '-f', podYaml])).rejects.toThrow(/POST .* failed: .*ECONNREFUSED/);
  });
});

describe('swarm event send rejects bad usage with one line', () => {
  it.each([
    [['send', '--type', 'add', '-f', 'x.yaml'], /--to URL is required/],
    [['send', '--to', 'http://h/', '-f', 'x.yaml'], /--type add\|update\|delete is required/],
    [['send', '--to', 'http://h/', '--type', 'add'], /-f OBJECT.yaml is required/],
    [['send', '--to', 'http://h/', '--type', 'patch', '-f', 'x.yaml'], /--type must be add, update or delete, not "patch"/],
    [['send', '--to', 'http://h/', '--type', 'add', '-f', 'x.yaml', '--mode', 'full'], /--mode must be resource or reference/],
    [['send', '--to', 'not a url', '--type', 'add', '-f', 'x.yaml'], /is not a URL/],
    [['send', '--to', 'ftp://h/', '--type', 'add', '-f', 'x.yaml'], /must be an http\(s\) URL/],
    [['send', '--to', 'http://h/', '--type', 'add', '-f', 'x.yaml', '--bogus'], /Unknown option '--bogus'/],
  ])('%j', (argv, problem) => {
    expect(() => parseSendArgs(argv.slice(1))).toThrow(CliError);
    expect(() => parseSendArgs(argv.slice(1))).toThrow(problem);
  });

  it.each([
    ['a missing file', () => run(['send', '--to', 'http://127.0.0.1:1/', '--type', 'add', '-f', join(dir, 'absent.yaml')]), /absent.yaml: no such file/],
    ['invalid YAML', () => run(['send', '--to', 'http://127.0.0.1:1/', '--type', 'add', '-f', file('bad.yaml', 'a: [1, 2')]), /bad.yaml: not valid YAML/],
    ['an object without a name', () => run(['send', '--to', 'http://127.0.0.1:1/', '--type', 'add', '-f', file('noname.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {}\n')]), /missing metadata.name/],
    ['a namespace conflict', () => run(['send', '--to', 'http://127.0.0.1:1/', '--type', 'add', '-n', 'other', '-f', podYaml]), /metadata.namespace is team-a but --namespace is other/],
    ['an unknown subcommand', () => run(['receive']), /unknown event subcommand "receive"/],
  ])('%s', async (_what, act, problem) => {
    const error = await act().then(() => undefined, (err: unknown) => err);
    expect(error).toBeInstanceOf(CliError);
    expect((error as Error).message).toMatch(problem);
    expect((error as Error).message).not.toContain('\n');
  });
});
