// charts/swarm is generated from knative/ and lib/api (npm run generate:chart):
// the checked-in chart is what the generator writes now, and it carries what
// the installation carries.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderSwarmCrd } from '../../lib/api/crd.js';
import { CHART_DIR, chartFiles, HAND_WRITTEN } from '../../dev/chart/generate.js';

const repo = resolve(import.meta.dirname, '../..');
const read = (path: string): string | undefined => {
  const full = join(repo, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined;
};
const files = chartFiles(read);

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

describe('charts/swarm', () => {
  it.each(Object.keys(files))('%s is fresh (npm run generate:chart)', (path) => {
    expect(read(join(CHART_DIR, path)), `${CHART_DIR}/${path} is stale: run npm run generate:chart`).toBe(files[path]);
  });

  it('holds nothing the generator does not write but its hand-written files', () => {
    const present = filesUnder(join(repo, CHART_DIR)).map((f) => relative(join(repo, CHART_DIR), f)).sort();
    expect(present).toEqual([...Object.keys(files), ...HAND_WRITTEN].sort());
  });

  it("crds/ holds lib/api's CRD; the chart version is package.json's", () => {
    expect(files['crds/swarm-crd.yaml']).toBe(renderSwarmCrd());
    const pkg = JSON.parse(read('package.json')!) as { version: string };
    expect(parse(files['Chart.yaml']!)).toMatchObject({ apiVersion: 'v2', name: 'swarm', version: pkg.version, appVersion: pkg.version });
  });

  it('every value has a schema; the schema refuses what it does not know', () => {
    const schema = JSON.parse(files['values.schema.json']!) as { properties: Record<string, unknown>; additionalProperties: boolean };
    const values = parse(files['values.yaml']!) as Record<string, unknown>;
    expect(Object.keys(values).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(schema.additionalProperties).toBe(false);
  });
});
