// The one classification of API failures, as a table: what a reconciler does
// with each (retry in-process, answer 503, or record it and answer 2xx).
import { describe, expect, it } from 'vitest';
import { classifyFailure, KubeError, toKubeError, type KubeCall } from '../../lib/kube/errors.js';

type KubeVerb = KubeCall['verb'];
import { ApiException } from '@kubernetes/client-node';

const apiError = (status: number, verb: KubeVerb) =>
  toKubeError(new ApiException(status, 'refused', JSON.stringify({ message: `status ${status}` }), {}), { verb, resource: 'configmaps', namespace: 'ns', name: 'cm' });

describe('classifyFailure', () => {
  it.each([
    // status, verb, class, reason
    [403, 'PATCH', 'permanent', 'Forbidden'],
    [403, 'CREATE', 'permanent', 'Forbidden'],
    [403, 'UPDATE', 'permanent', 'Forbidden'],
    [422, 'PATCH', 'permanent', 'InvalidWrite'],
    [422, 'UPDATE', 'permanent', 'InvalidWrite'],
    [400, 'CREATE', 'permanent', 'InvalidWrite'],
    [413, 'PATCH', 'permanent', 'InvalidWrite'],
    [404, 'CREATE', 'permanent', 'NamespaceNotFound'],
    [404, 'PATCH', 'conflict', undefined],
    [404, 'UPDATE', 'conflict', undefined],
    [409, 'PATCH', 'conflict', undefined],
    [409, 'CREATE', 'conflict', undefined],
    [401, 'GET', 'transient', undefined],
    [429, 'PATCH', 'transient', undefined],
    [500, 'PATCH', 'transient', undefined],
    [503, 'LIST', 'transient', undefined],
    [504, 'GET', 'transient', undefined],
  ] as const)('%i on %s → %s %s', (status, verb, expected, reason) => {
    const err = apiError(status, verb);
    expect(err.message).toContain(`${verb} configmaps ns/cm: ${status}`);
    expect(classifyFailure(err)).toEqual(reason ? { class: expected, reason } : { class: expected });
  });

  it.each([
    ['a timeout', new KubeError('Transient', 504, 'timed out after 10000 ms', 'GET pods in ns', 'GET')],
    ['a connection reset', toKubeError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), { verb: 'PATCH', resource: 'configmaps', namespace: 'ns' })],
    ['a persistent conflict, after the bounded retries', new KubeError('Transient', 503, 'still conflicting after 5 attempts', 'PATCH configmaps ns/cm')],
    ['something that is not an API error', new Error('boom')],
  ])('%s → transient', (_what, err) => {
    expect(classifyFailure(err)).toEqual({ class: 'transient' });
  });

  it('a 401 stays retryable (a projected token may be mid-rotation)', () => {
    expect(apiError(401, 'GET').kind).toBe('Transient');
    expect(apiError(403, 'GET').kind).toBe('Forbidden');
  });
});
