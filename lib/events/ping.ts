// The resync ping, shaped like Knative's PingSource sends it (knative.dev/eventing
// pkg/adapter/mtping): type dev.knative.sources.ping, source the PingSource's
// path, the PingSource's `spec.data` as JSON data. In a cluster the PingSource
// sends it (knative/base/pingsource.yaml) every five minutes; the tests post the same
// event to the Broker's ingress when they need it sooner (test/harness/swarm-on-knative.ts).
import { randomUUID } from 'node:crypto';
import { CloudEvent } from 'cloudevents';
import { PING_EVENT_TYPE, type ResyncData } from './types.js';

/** `pingSource`: the PingSource it stands for (default: the namespace's own, knative/base/pingsource.yaml), as the event's source. */
export function resyncPingEvent(data: ResyncData, pingSource = { namespace: 'swarm-system', name: `swarm-resync-${data.namespace}` }): CloudEvent<ResyncData> {
  return new CloudEvent<ResyncData>({
    specversion: '1.0',
    id: randomUUID(),
    type: PING_EVENT_TYPE,
    source: `/apis/v1/namespaces/${pingSource.namespace}/pingsources/${pingSource.name}`,
    datacontenttype: 'application/json',
    data: { namespace: data.namespace },
  });
}
