import { describe, expect, it } from 'vitest';
import { hangHook } from '../../examples/worker/hang-hook.js';

describe('the reference worker\'s hang hook (a test hook)', () => {
  it('is off without a signal: healthy whatever runs', () => {
    const hook = hangHook(undefined, () => ['a'], () => undefined, () => {
      throw new Error('no listener expected');
    });
    expect(hook.health(['a'])).toBe(true);
  });

  it('on its signal, the jobs running then hang until each is stopped; later jobs do not', () => {
    let fire: () => void = () => undefined;
    const hung: string[][] = [];
    const hook = hangHook('SIGUSR2', () => ['a', 'b'], (jobs) => hung.push([...jobs]), (signal, listener) => {
      expect(signal).toBe('SIGUSR2');
      fire = listener;
    });
    expect(hook.health(['a', 'b'])).toBe(true);
    fire();
    expect(hung).toEqual([['a', 'b']]);
    expect(hook.health(['a', 'b', 'c'])).toBe(false);
    hook.stopped('a');
    expect(hook.health(['b'])).toBe(false);
    hook.stopped('b');
    expect(hook.health(['a', 'b', 'c'])).toBe(true);
  });
});
