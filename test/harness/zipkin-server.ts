// Zipkin's server as npm start's trace viewer (dev tooling): its `exec` jar
// from Maven Central (fetched once with mvn, the machine's own Maven client,
// into the project's cache and checked against the sha1 Maven Central
// publishes for it), run with Java 17 on loopback with in-memory storage. It
// takes only Zipkin's span format, so the trace sink converts what the
// collector sends it (otlp-to-zipkin.ts) and posts it here (zipkinForwarder).
// Jaeger would take OTLP, but the module the Go proxy serves has no UI
// (docs/operations.md, "Traces").
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { acquireLock, cacheRoot, type ProgressFn } from '../controlplane/build.js';
import { ensureHostPackages, VIEWER_PACKAGES } from '../prereqs.js';
import { zipkinSpans } from './otlp-to-zipkin.js';
import type { CollectedSpan } from './trace-sink.js';

export const ZIPKIN_ARTIFACT = 'io.zipkin:zipkin-server:3.5.1:jar:exec';
/** Maven Central's zipkin-server-3.5.1-exec.jar.sha1. */
export const ZIPKIN_SHA1 = '38091e0934648a5dc884ad17c62cf2f6502f4ff2';
export const ZIPKIN_PORT = 9411;

async function sha1Of(path: string): Promise<string> {
  const hash = createHash('sha1');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The jar's path in the cache, fetched the first time (about 125 MiB). */
export async function zipkinJar(progress: ProgressFn): Promise<string> {
  const dir = join(cacheRoot(), `zipkin-server-3.5.1-${ZIPKIN_SHA1.slice(0, 12)}`);
  const jar = join(dir, 'zipkin-server-exec.jar');
  if (existsSync(jar)) return jar;
  await mkdir(dir, { recursive: true });
  const release = await acquireLock(join(dir, '.lock'), progress, 'zipkin-server download');
  try {
    if (existsSync(jar)) return jar;
    progress(`zipkin: fetching ${ZIPKIN_ARTIFACT} (about 125 MiB) with mvn, once, into ${dir}`);
    const scratch = join(dir, 'scratch');
    await rm(scratch, { recursive: true, force: true });
    // -C: fail when the download's checksum does not match the repository's.
    await promisify(execFile)('mvn', ['-B', '-q', '-C', 'dependency:copy', `-Dartifact=${ZIPKIN_ARTIFACT}`, `-DoutputDirectory=${scratch}`], {
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`mvn dependency:copy ${ZIPKIN_ARTIFACT} failed: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    const [file] = await readdir(scratch);
    if (!file) throw new Error(`mvn dependency:copy ${ZIPKIN_ARTIFACT} left no file in ${scratch}`);
    const sha1 = await sha1Of(join(scratch, file));
    if (sha1 !== ZIPKIN_SHA1) throw new Error(`${file}: sha1 ${sha1}, expected ${ZIPKIN_SHA1}`);
    await rename(join(scratch, file), jar);
    await rm(scratch, { recursive: true, force: true });
    await writeFile(join(dir, 'done.json'), `${JSON.stringify({ artifact: ZIPKIN_ARTIFACT, sha1, fetchedAt: new Date().toISOString() })}\n`);
    return jar;
  } finally {
    await release();
  }
}

export interface Zipkin {
  /** http://127.0.0.1:<port>: the UI under /zipkin/, the API under /api/v2/. */
  readonly url: string;
  stop(): Promise<void>;
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Starts Zipkin on 127.0.0.1:`port` (in-memory storage) and waits until it
 * answers /health. The JVM gets SIGTERM when this process dies, however it
 * dies (setpriv --pdeathsig), so none is left behind.
 */
export async function startZipkin(options: { port?: number; progress: ProgressFn; signal?: AbortSignal }): Promise<Zipkin> {
  const { progress } = options;
  const port = options.port ?? ZIPKIN_PORT;
  if (!ensureHostPackages(VIEWER_PACKAGES)) throw new Error('Java 17 and Maven are needed for the trace viewer (Zipkin)');
  const jar = await zipkinJar(progress);
  const url = `http://127.0.0.1:${port}`;
  if (await fetch(`${url}/health`).then(() => true, () => false)) throw new Error(`${url} is taken already (another Zipkin?)`);
  progress(`zipkin: starting on ${url} (in-memory storage; about 10 s)`);
  let output = '';
  const child = spawn(
    'setpriv',
    ['--pdeathsig', 'SIGTERM', 'java', '-jar', jar, `--armeria.ports[0].port=${port}`, '--armeria.ports[0].ip=127.0.0.1', '--armeria.ports[0].protocols[0]=http'],
    // Its own process group: a terminal's Ctrl-C reaches npm start, which stops it in order.
    { env: { ...process.env, STORAGE_TYPE: 'mem' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  let failed: Error | undefined;
  child.once('error', (err) => (failed = err));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const stop = async () => {
    child.kill('SIGTERM');
    if (!(await exited(child, 15_000))) {
      child.kill('SIGKILL');
      await exited(child, 5000);
    }
  };
  const started = Date.now();
  try {
    for (;;) {
      if (failed) throw new Error(`zipkin: ${failed.message}`);
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`zipkin exited (${child.exitCode ?? child.signalCode}):\n${output}`);
      if (options.signal?.aborted) throw new Error('stopping');
      if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) break;
      if (Date.now() - started > 120_000) throw new Error(`zipkin did not answer ${url}/health within 120 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  progress(`zipkin: ready in ${Math.round((Date.now() - started) / 1000)}s, UI at ${url.replace('127.0.0.1', 'localhost')}/zipkin/`);
  return { url, stop };
}

/**
 * An onSpans for startTraceSink: posts each batch to Zipkin in its format.
 * A failed post is reported, not retried (a viewer missing a batch is no reason to stop).
 */
export function zipkinForwarder(url: string, onError: (message: string) => void): (spans: readonly CollectedSpan[]) => void {
  return (spans) => {
    if (spans.length === 0) return;
    fetch(`${url}/api/v2/spans`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(zipkinSpans(spans)) }).then(
      async (res) => {
        if (!res.ok) onError(`zipkin refused ${spans.length} spans: ${res.status} ${await res.text()}`);
      },
      (err: unknown) => onError(`zipkin: ${err instanceof Error ? err.message : String(err)}`),
    );
  };
}
