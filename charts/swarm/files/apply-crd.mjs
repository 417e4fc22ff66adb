/* global fetch, setTimeout */
// The chart's CRD upgrade (a pre-upgrade hook Job, templates/crd-upgrade-hook.yaml):
// Helm installs crds/ but never upgrades it, so this applies the chart's CRD
// server-side (field manager swarm-chart, taking over fields `helm install`
// or an earlier apply set), then waits until the API server serves it
// (Established). Runs in the functions' image with plain Node: the API
// server's CA comes through NODE_EXTRA_CA_CERTS. Exit 1 fails the upgrade
// before anything else of the release changes. SWARM_ACCOUNT_DIR and
// SWARM_CRD_FILE stand in for the pod's paths when a test runs it on a host.
import { readFileSync } from 'node:fs';

const account = process.env.SWARM_ACCOUNT_DIR ?? '/var/run/secrets/kubernetes.io/serviceaccount';
const name = 'swarms.k8slab.info';
const api = `https://${process.env.KUBERNETES_SERVICE_HOST}:${process.env.KUBERNETES_SERVICE_PORT}`;
const url = `${api}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
const headers = { authorization: `Bearer ${readFileSync(`${account}/token`, 'utf8').trim()}` };

const applied = await fetch(`${url}?fieldManager=swarm-chart&force=true`, {
  method: 'PATCH',
  headers: { ...headers, 'content-type': 'application/apply-patch+yaml' },
  body: readFileSync(process.env.SWARM_CRD_FILE ?? '/etc/swarm-crd/swarm-crd.yaml', 'utf8'),
});
if (!applied.ok) {
  console.error(`applying CRD ${name}: ${applied.status} ${await applied.text()}`);
  process.exit(1);
}
console.log(`applied CRD ${name}`);

for (let attempt = 0; attempt < 60; attempt++) {
  const crd = await (await fetch(url, { headers })).json();
  const established = (crd.status?.conditions ?? []).find((c) => c.type === 'Established');
  if (established?.status === 'True') {
    console.log(`CRD ${name} is Established`);
    process.exit(0);
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
console.error(`CRD ${name} not Established after 60 s`);
process.exit(1);
