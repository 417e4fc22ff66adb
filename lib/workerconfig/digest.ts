// The digest of a job list, shared by Swarm (lib/decisions/coverage.ts) and the
// workers (sdk/typescript/src/lease.ts; sdk/go, sdk/python), so an acknowledgement can be checked
// against the share without listing every job in it. Job names are ASCII
// (lib/api/schema.ts), so code-unit order is byte order in any language:
// sha256 over each name followed by "\n", names sorted, hex, prefixed "sha256:".
import { createHash } from 'node:crypto';
import { compareNames } from '../assignment/jobs.js';

export function jobsDigest(jobs: readonly string[]): string {
  const hash = createHash('sha256');
  for (const job of [...jobs].sort(compareNames)) hash.update(`${job}\n`);
  return `sha256:${hash.digest('hex')}`;
}
