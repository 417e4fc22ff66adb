import { describe, expect, it } from 'vitest';
import { candidatePorts, freePorts, reservedPorts } from '../../controlplane/ports.js';

describe('ports handed to components started later', () => {
  it('are drawn below the ephemeral range and the NodePort range, never reserved ones', () => {
    const reserved = reservedPorts('20005, 20010-20012');
    const ports = candidatePorts([32768, 60999], reserved);
    expect(ports.length).toBe(10_000 - 4);
    expect(Math.min(...ports)).toBe(20_000);
    expect(Math.max(...ports)).toBe(29_999);
    expect(ports).not.toContain(20_005);
    expect(ports).not.toContain(20_011);
  });

  it('stay below an ephemeral range that starts low, and come back empty when it leaves no room', () => {
    expect(Math.max(...candidatePorts([25_000, 60999], () => false))).toBe(24_999);
    expect(candidatePorts([1024, 65535], () => false)).toEqual([]);
  });

  it('are distinct and free', async () => {
    const ports = await freePorts(5);
    expect(new Set(ports).size).toBe(5);
  });
});
