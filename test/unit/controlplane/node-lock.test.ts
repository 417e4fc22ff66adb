import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireNodeLock, releaseNodeLock } from '../../controlplane/node.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A pid whose process has exited (and been reaped). */
const deadPid = (): number => spawnSync('true').pid;
const noCleanupExpected = async () => {
  throw new Error('no cleanup expected');
};

describe('the real node lock', () => {
  // Each test's lock lives in its own temporary directory: never the machine's.
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'swarm-node-lock-'));
    dir = join(root, 'node.lock');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const owner = () => JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')) as unknown;
  const holdLock = (record: { workDir: string; ownerPid: number; pids: number[] }) => {
    mkdirSync(dir);
    writeFileSync(join(dir, 'owner.json'), JSON.stringify(record));
  };
  const makeOld = (path: string) => {
    const minuteAgo = (Date.now() - 60_000) / 1000;
    utimesSync(path, minuteAgo, minuteAgo);
  };

  it('gives up at once when the start is aborted (Ctrl-C while waiting), touching nothing', async () => {
    await expect(acquireNodeLock('/nonexistent', () => {}, 60_000, AbortSignal.abort())).rejects.toThrow('stopped while waiting for the real node');
  });

  it('takes a free lock whose directory is never seen without its owner', async () => {
    let settled = false;
    const acquiring = acquireNodeLock('/work/a', () => {}, 1000, undefined, { dir, cleanup: noCleanupExpected }).finally(() => {
      settled = true;
    });
    // Looks at every turn of the event loop, between the acquire's file operations.
    while (!settled) {
      if (existsSync(dir)) expect(readdirSync(dir)).toEqual(['owner.json']);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await acquiring;
    expect(owner()).toEqual({ workDir: '/work/a', ownerPid: process.pid, pids: [] });
    expect(readdirSync(root)).toEqual(['node.lock']);
  });

  it('waits for a live holder and times out naming it', async () => {
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      holdLock({ workDir: '/work/other', ownerPid: holder.pid!, pids: [] });
      const progress: string[] = [];
      await expect(
        acquireNodeLock('/work/a', (line) => progress.push(line), 100, undefined, { dir, cleanup: noCleanupExpected }),
      ).rejects.toThrow(`the real node (cni0, port 10250, iptables) is held by the cluster in /work/other (pid ${holder.pid}); stop it`);
      expect(progress).toEqual([`waiting for the real node held by the cluster in /work/other (pid ${holder.pid}) (one per machine; timeout 0s)`]);
      expect(owner()).toEqual({ workDir: '/work/other', ownerPid: holder.pid, pids: [] });
    } finally {
      holder.kill();
    }
  });

  it('has racing acquirers take over a dead holder once, then hold the lock in turn, never two at once', async () => {
    holdLock({ workDir: '/work/dead', ownerPid: deadPid(), pids: [deadPid()] });
    writeFileSync(join(dir, 'sysctls.json'), '{}');
    // As a dead holder's lock would be: an owner read half-written is then no excuse to wait.
    makeOld(dir);
    let cleanups = 0;
    let holding: string | undefined;
    const acquireAndRelease = async (workDir: string) => {
      const cleanup = async () => {
        cleanups++;
        // What the dead holder recorded is still there for the cleanup to restore.
        expect(existsSync(join(dir, 'sysctls.json'))).toBe(true);
        expect(owner()).toEqual({ workDir, ownerPid: process.pid, pids: [] });
        await sleep(50);
        expect(owner()).toEqual({ workDir, ownerPid: process.pid, pids: [] });
        await releaseNodeLock(dir);
      };
      await acquireNodeLock(workDir, () => {}, 30_000, undefined, { dir, cleanup });
      expect(holding).toBeUndefined();
      holding = workDir;
      expect(owner()).toEqual({ workDir, ownerPid: process.pid, pids: [] });
      await sleep(50);
      holding = undefined;
      await releaseNodeLock(dir);
    };
    await Promise.all(['/work/a', '/work/b', '/work/c'].map(acquireAndRelease));
    expect(cleanups).toBe(1);
    expect(readdirSync(root)).toEqual([]);
  }, 30_000);

  it('does not take over a lock without an owner while it may still be being published', async () => {
    mkdirSync(dir);
    await expect(acquireNodeLock('/work/a', () => {}, 100, undefined, { dir, cleanup: noCleanupExpected })).rejects.toThrow(
      `the real node (cni0, port 10250, iptables) is being taken (${dir} has no owner yet)`,
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it('takes over a lock without an owner once it is older than any publish', async () => {
    mkdirSync(dir);
    makeOld(dir);
    let cleanups = 0;
    const cleanup = async () => {
      cleanups++;
      expect(owner()).toEqual({ workDir: '/work/a', ownerPid: process.pid, pids: [] });
      await releaseNodeLock(dir);
    };
    await acquireNodeLock('/work/a', () => {}, 1000, undefined, { dir, cleanup });
    expect(cleanups).toBe(1);
    expect(owner()).toEqual({ workDir: '/work/a', ownerPid: process.pid, pids: [] });
  });

  it('waits while another acquirer takes over a dead holder, and clears the takeover of one that died doing it', async () => {
    holdLock({ workDir: '/work/dead', ownerPid: deadPid(), pids: [] });
    mkdirSync(join(dir, 'takeover'));
    await expect(acquireNodeLock('/work/a', () => {}, 100, undefined, { dir, cleanup: noCleanupExpected })).rejects.toThrow(
      'is held by the cluster in /work/dead',
    );
    makeOld(join(dir, 'takeover'));
    let cleanups = 0;
    const cleanup = async () => {
      cleanups++;
      await releaseNodeLock(dir);
    };
    await acquireNodeLock('/work/a', () => {}, 1000, undefined, { dir, cleanup });
    expect(cleanups).toBe(1);
    expect(readdirSync(dir)).toEqual(['owner.json']);
  });
});
