// The worker protocol's done-when: every MUST is numbered and named by the
// conformance scenario that checks it (docs/worker-protocol.md §10). This
// holds the spec's numbers, its §10 table, the scenario each requirement's
// text names, and each scenario's `checks` to one another, so that a
// scenario added, renamed or re-aimed cannot leave the spec saying otherwise.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenarios } from '../support/conformance/scenario.js';

const SPEC = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'worker-protocol.md'), 'utf8');
const scenarios = loadScenarios();
const scenarioNames = new Set(scenarios.map((s) => s.name));
/** Rows that name no scenario: checked by the runner at every Lease step (lease-check.ts). */
const EVERY_SCENARIO = 'every scenario';

/** Each requirement, in the order the spec defines it, with the text that defines it. */
function definitions(): { id: string; text: string }[] {
  const body = SPEC.slice(0, SPEC.indexOf('## 10. Conformance'));
  const starts = [...body.matchAll(/\*\*(W\d+)\*\*/g)];
  return starts.map((m, i) => {
    const rest = body.slice(m.index, starts[i + 1]?.index ?? body.length);
    // A requirement's text ends at a blank line or the next list item.
    const end = Math.min(...['\n\n', '\n- '].map((sep) => rest.indexOf(sep)).filter((at) => at >= 0), rest.length);
    return { id: m[1]!, text: rest.slice(0, end) };
  });
}

/** §10's table: requirement → its cell. */
function table(): Map<string, string> {
  const section = SPEC.slice(SPEC.indexOf('## 10. Conformance'));
  const rows = new Map<string, string>();
  for (const m of section.matchAll(/^\| (W\d+) \| (.*) \|$/gm)) {
    expect(rows.has(m[1]!), `${m[1]} has one row`).toBe(false);
    rows.set(m[1]!, m[2]!);
  }
  return rows;
}

/** The scenario names a cell or a text gives: hyphenated words outside code spans that name a scenario file. */
const namedIn = (text: string): string[] => [...text.replace(/`[^`]*`/g, '').matchAll(/\b[a-z0-9]+(?:-[a-z0-9]+)+\b/g)].map((m) => m[0]);
/** The scenarios a requirement's own text names: its code spans that are scenario names. */
const citedIn = (text: string): string[] => [...text.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]!).filter((name) => scenarioNames.has(name));

describe('docs/worker-protocol.md: every MUST named by the conformance scenario that checks it', () => {
  const defined = definitions();
  const rows = table();

  it('numbers its requirements W1 … Wn, each defined once', () => {
    expect(defined.map((d) => d.id)).toEqual(defined.map((_, i) => `W${i + 1}`));
  });

  it('gives each requirement, and only those, a row in §10', () => {
    expect([...rows.keys()]).toEqual(defined.map((d) => d.id));
  });

  it('names in each row only scenarios that exist and whose checks list that requirement', () => {
    const wrong: string[] = [];
    for (const [id, cell] of rows) {
      const names = namedIn(cell);
      if (names.length === 0 && !cell.startsWith(EVERY_SCENARIO)) wrong.push(`${id}: names no scenario`);
      for (const name of names) {
        const scenario = scenarios.find((s) => s.name === name);
        if (!scenario) wrong.push(`${id}: ${name} is not a scenario`);
        else if (!scenario.checks.includes(id)) wrong.push(`${id}: ${name} does not list it in checks`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("lists each scenario in the rows of the requirements its checks name", () => {
    const wrong: string[] = [];
    for (const scenario of scenarios) {
      expect(scenario.checks.length, `${scenario.name} checks something`).toBeGreaterThan(0);
      for (const id of scenario.checks) if (!namedIn(rows.get(id) ?? '').includes(scenario.name)) wrong.push(`${scenario.name}: checks ${id}, not in its row`);
    }
    expect(wrong).toEqual([]);
  });

  it("names in each requirement's own text only scenarios of its row", () => {
    const wrong: string[] = [];
    for (const { id, text } of defined) for (const name of citedIn(text)) if (!namedIn(rows.get(id) ?? '').includes(name)) wrong.push(`${id} cites ${name}`);
    expect(wrong).toEqual([]);
  });

  it('checks the rows that say every scenario at every Lease step: some scenario has one', () => {
    const every = [...rows].filter(([, cell]) => cell.startsWith(EVERY_SCENARIO)).map(([id]) => id);
    expect(every).toEqual(['W14']);
    expect(scenarios.filter((s) => s.steps.some((step) => 'lease' in step || 'leaseNow' in step)).length).toBeGreaterThan(scenarios.length / 2);
  });
});
