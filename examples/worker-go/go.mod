module k8slab.info/swarm/examples/worker-go

go 1.22

require k8slab.info/swarm/sdk/go v0.0.0

require gopkg.in/yaml.v3 v3.0.1 // indirect

replace k8slab.info/swarm/sdk/go => ../../sdk/go
