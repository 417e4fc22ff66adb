// What of the machine a real node could leave behind, as comparable text:
// network interfaces, iptables rules (counters stripped), mount points, the
// kubepods cgroups and the sysctls the node's components may change. A
// snapshot before a cluster starts and one after it stops must be equal.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { NODE_SYSCTLS, sysctlPath } from './node-config.js';

export interface HostSnapshot {
  readonly links: readonly string[];
  readonly iptables: readonly string[];
  readonly mounts: readonly string[];
  readonly cgroups: readonly string[];
  readonly sysctls: readonly string[];
}

/** `ip -o link` lines without what changes by itself (counters, link state flags, queue state). */
export function normaliseLinks(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const match = /^\d+: ([^:@]+)[^:]*:/.exec(line);
      return match ? match[1]! : line;
    })
    .sort();
}

/** `iptables-save` without comments and packet/byte counters. */
export function normaliseIptables(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.replace(/\[\d+:\d+\]/g, '[0:0]').replace(/^\[\d+:\d+\] /, ''));
}

/** Mount points (field 5) of a mountinfo file, sorted. */
export function normaliseMounts(mountinfo: string): string[] {
  return mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => !!point)
    .sort();
}

export function takeSnapshot(): HostSnapshot {
  const out = (command: string, args: string[]): string => {
    const result = spawnSync(command, args, { encoding: 'utf8' });
    return result.status === 0 ? result.stdout : '';
  };
  const cgroups: string[] = [];
  if (existsSync('/sys/fs/cgroup')) {
    for (const hierarchy of readdirSync('/sys/fs/cgroup')) {
      if (existsSync(`/sys/fs/cgroup/${hierarchy}/kubepods`)) cgroups.push(`${hierarchy}/kubepods`);
    }
  }
  return {
    links: normaliseLinks(out('ip', ['-o', 'link'])),
    iptables: [...normaliseIptables(out('iptables-save', [])), ...normaliseIptables(out('ip6tables-save', []))],
    mounts: normaliseMounts(readFileSync('/proc/self/mountinfo', 'utf8')),
    cgroups,
    sysctls: NODE_SYSCTLS.flatMap((name) => {
      try {
        return [`${name} = ${readFileSync(sysctlPath(name), 'utf8').trim()}`];
      } catch {
        return [];
      }
    }),
  };
}

/** Lines added (+) or removed (-) per aspect; empty when the machine is as it was. */
export function diffSnapshots(before: HostSnapshot, after: HostSnapshot): string[] {
  const diff: string[] = [];
  for (const aspect of Object.keys(before) as (keyof HostSnapshot)[]) {
    const was = new Set(before[aspect]);
    const now = new Set(after[aspect]);
    for (const line of after[aspect]) if (!was.has(line)) diff.push(`${aspect} + ${line}`);
    for (const line of before[aspect]) if (!now.has(line)) diff.push(`${aspect} - ${line}`);
  }
  return diff;
}
