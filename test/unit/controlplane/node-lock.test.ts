import { describe, expect, it } from 'vitest';
import { acquireNodeLock } from '../../controlplane/node.js';

describe('the real node lock', () => {
  it('gives up at once when the start is aborted (Ctrl-C while waiting), touching nothing', async () => {
    await expect(acquireNodeLock('/nonexistent', () => {}, 60_000, AbortSignal.abort())).rejects.toThrow('stopped while waiting for the real node');
  });
});
