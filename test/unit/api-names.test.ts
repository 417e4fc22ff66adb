import { describe, expect, it } from 'vitest';
import { checkName, nameProblem, quoteName } from '../../lib/api/names.js';

describe('Kubernetes names', () => {
  it.each([
    ['web', true, true],
    ['web.v2', false, true],
    ['web-0', true, true],
    ['0', true, true],
    ['a'.repeat(63), true, true],
    ['a'.repeat(64), false, true],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, false, true], // 253
    ['a'.repeat(254), false, false],
    ['a'.repeat(300), false, false],
    ['', false, false],
    ['.', false, false],
    ['..', false, false],
    ['web..v2', false, false],
    ['Web', false, false],
    ['web_1', false, false],
    ['-web', false, false],
    ['web-', false, false],
    ['bad/NAME', false, false],
    ['web\u0000', false, false],
    ['web\n', false, false],
    ['🐝', false, false],
  ])('%j: label %s, subdomain %s', (name, label, subdomain) => {
    // StatefulSet names are DNS labels, ConfigMap names DNS subdomains.
    expect(nameProblem('StatefulSet', name) === undefined).toBe(label);
    expect(nameProblem('ConfigMap', name) === undefined).toBe(subdomain);
  });

  it('applies the rule each kind has in the apiserver', () => {
    expect(nameProblem('Namespace', 'a.b')).toMatch(/^not a DNS-1123 label/);
    expect(nameProblem('StatefulSet', 'a.b')).toMatch(/^not a DNS-1123 label/);
    for (const kind of ['Pod', 'ConfigMap', 'Swarm'] as const) {
      expect(nameProblem(kind, 'a.b')).toBeUndefined();
      expect(nameProblem(kind, '..')).toMatch(/^not a DNS-1123 subdomain/);
    }
  });

  it('names the field and quotes the value, shortened and escaped', () => {
    expect(checkName('data.metadata.name', 'Swarm', 'ok')).toBeUndefined();
    expect(checkName('data.metadata.name', 'Swarm', '..')).toMatch(/^data\.metadata\.name: "\.\.": not a DNS-1123 subdomain/);
    expect(quoteName('a\u0000')).toBe('"a\\u0000"');
    expect(quoteName('x'.repeat(300))).toBe(`"${'x'.repeat(60)}…" (300 characters)`);
  });
});
