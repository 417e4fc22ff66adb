module swarm.local/probe

go 1.22
