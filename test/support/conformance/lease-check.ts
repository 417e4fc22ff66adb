// The runner's check of the worker's acknowledgement, at every Lease step of
// every scenario (docs/worker-protocol.md W9, W13, W14 and §4's protocol).
import type * as k8s from '@kubernetes/client-node';
import { DIGEST_ANNOTATION, FENCED_ANNOTATION, jobsDigest, LOADED_AT_ANNOTATION, PROTOCOL_ANNOTATION, SWARM_LABEL, VERSION_ANNOTATION } from '../../../lib/workerconfig/index.js';
import type { LeaseExpectation } from './scenario.js';

/** What is wrong with `lease` against the expectation, or undefined when it matches (W9, W13, W14; the protocol, §4). */
export function leaseMismatch(lease: k8s.V1Lease, expected: LeaseExpectation, who: { uid: string; pool: string; protocol: string; began?: number }): string | undefined {
  const annotations = lease.metadata?.annotations ?? {};
  const labels = lease.metadata?.labels ?? {};
  const spec = (lease.spec ?? {}) as Record<string, unknown>;
  const wrong: string[] = [];
  if (lease.spec?.holderIdentity !== who.uid) wrong.push(`holder ${lease.spec?.holderIdentity} (want ${who.uid})`);
  if (labels[SWARM_LABEL] !== who.pool) wrong.push(`label ${SWARM_LABEL}=${labels[SWARM_LABEL]} (want ${who.pool})`);
  if (annotations[VERSION_ANNOTATION] !== String(expected.version)) wrong.push(`version ${annotations[VERSION_ANNOTATION]} (want ${expected.version})`);
  if (annotations[DIGEST_ANNOTATION] !== jobsDigest(expected.jobs)) wrong.push(`digest ${annotations[DIGEST_ANNOTATION]} (want that of [${expected.jobs.join(', ')}])`);
  if (annotations[PROTOCOL_ANNOTATION] !== who.protocol) wrong.push(`${PROTOCOL_ANNOTATION}=${annotations[PROTOCOL_ANNOTATION]} (want ${who.protocol})`);
  if (Number.isNaN(Date.parse(annotations[LOADED_AT_ANNOTATION] ?? ''))) wrong.push(`loaded-at ${annotations[LOADED_AT_ANNOTATION]}`);
  // Second precision on either side (RFC 3339 with or without fractions): a second's slack.
  else if (expected.loadedSinceRun && who.began !== undefined && Date.parse(annotations[LOADED_AT_ANNOTATION]!) < who.began - 1000) wrong.push(`loaded-at ${annotations[LOADED_AT_ANNOTATION]}: before this run (an earlier run's, W9)`);
  for (const field of ['renewTime', 'acquireTime', 'leaseDurationSeconds', 'leaseTransitions']) if (spec[field] !== undefined && spec[field] !== null) wrong.push(`spec.${field} set (reserved, W14)`);
  for (const [k, v] of Object.entries(expected.labels ?? {})) if (labels[k] !== v) wrong.push(`label ${k}=${labels[k]} (want ${v})`);
  for (const [k, v] of Object.entries(expected.annotations ?? {})) if (annotations[k] !== v) wrong.push(`annotation ${k}=${annotations[k]} (want ${v})`);
  // Absent from every Lease state a scenario expects unless it names it: said only while fenced, waiting for an empty share (W27).
  if (expected.annotations?.[FENCED_ANNOTATION] === undefined && annotations[FENCED_ANNOTATION] !== undefined) wrong.push(`annotation ${FENCED_ANNOTATION}=${annotations[FENCED_ANNOTATION]} (want none)`);
  return wrong.length ? wrong.join('; ') : undefined;
}
