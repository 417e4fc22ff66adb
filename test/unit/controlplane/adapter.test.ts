import { describe, expect, it } from 'vitest';
import { adapterEnv, sourceConfig } from '../../controlplane/adapter.js';

const resources = [
  { group: 'k8slab.info', version: 'v1alpha1', resource: 'swarms' },
  { group: '', version: 'v1', resource: 'pods', labelSelector: 'k8slab.info/swarm' },
];

describe('ApiServerSource adapter configuration', () => {
  it('marshals the source config as the ApiServerSource controller does (Go field names for the GVR)', () => {
    expect(JSON.parse(sourceConfig({ mode: 'Reference', resources, namespace: 'team-a' }))).toEqual({
      namespaces: ['team-a'],
      allNamespaces: false,
      resources: [
        { gvr: { Group: 'k8slab.info', Version: 'v1alpha1', Resource: 'swarms' } },
        { gvr: { Group: '', Version: 'v1', Resource: 'pods' }, selector: 'k8slab.info/swarm' },
      ],
      mode: 'Reference',
    });
  });

  it('gives the adapter its sink, source config, identity and kubeconfig through the environment', () => {
    const env = adapterEnv(
      { kubeconfig: '/k/admin', sink: 'http://127.0.0.1:9999/', mode: 'Resource', resources, namespace: 'team-a', name: 'swarm' },
      43210,
    );
    expect(env.KUBECONFIG).toBe('/k/admin');
    expect(env.K_SINK).toBe('http://127.0.0.1:9999/');
    expect(env.NAMESPACE).toBe('team-a');
    expect(env.NAME).toBe('swarm');
    expect(JSON.parse(env.K_SOURCE_CONFIG ?? '{}').mode).toBe('Resource');
    expect(env.PROFILING_PORT).toBe('43210');
    expect(() => JSON.parse(env.K_LOGGING_CONFIG ?? '')).not.toThrow();
  });
});
