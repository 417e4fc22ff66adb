// Protocol 2's settings (docs/worker-protocol.md §8): the Swarm publishes
// failover.yml beside config.yml, and the worker renews a heartbeat Lease of
// its own on their timing. The names and arithmetic follow
// lib/workerconfig/failover.ts, so Swarm and every SDK agree.
package swarmworker

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	// FailoverKey is the file beside config.yml with the failover settings; absent: protocol 1.
	FailoverKey = "failover.yml"
	// HeartbeatLabel labels the heartbeat Lease (value: the pool), not SwarmLabel: the event source never delivers a renewal.
	HeartbeatLabel = "k8slab.info/heartbeat"
	// FailoverProtocol is the protocol a worker announces while it heartbeats.
	FailoverProtocol = "2"
	BreakBeforeMake  = "BreakBeforeMake"
	MakeBeforeBreak  = "MakeBeforeBreak"
)

// FailoverSettings are failover.yml's two fields.
type FailoverSettings struct {
	LeaseSeconds int    // L: the heartbeat Lease's duration
	Handoff      string // the Swarm's handoff: under BreakBeforeMake a stale worker stops its jobs
}

// HeartbeatLeaseName is a pod's heartbeat Lease, apart from its acknowledgement.
func HeartbeatLeaseName(pod string) string { return pod + ".heartbeat" }

var failoverLine = regexp.MustCompile(`^([A-Za-z]+):\s*(\S+)$`)

// ParseFailover reads exactly the two fields Swarm writes; anything else is refused as a whole.
func ParseFailover(text []byte) (FailoverSettings, error) {
	fields := map[string]string{}
	for _, raw := range strings.Split(string(text), "\n") {
		line := raw
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		m := failoverLine.FindStringSubmatch(line)
		if m == nil {
			return FailoverSettings{}, fmt.Errorf("%s: cannot read line %q", FailoverKey, raw)
		}
		if _, twice := fields[m[1]]; twice {
			return FailoverSettings{}, fmt.Errorf("%s: %s given twice", FailoverKey, m[1])
		}
		fields[m[1]] = m[2]
	}
	lease, err := strconv.Atoi(fields["leaseSeconds"])
	if err != nil || lease < 3 || lease > 300 {
		return FailoverSettings{}, fmt.Errorf("%s: leaseSeconds must be an integer from 3 to 300", FailoverKey)
	}
	handoff := fields["handoff"]
	if handoff != BreakBeforeMake && handoff != MakeBeforeBreak {
		return FailoverSettings{}, fmt.Errorf("%s: handoff must be MakeBeforeBreak or BreakBeforeMake", FailoverKey)
	}
	if len(fields) != 2 {
		return FailoverSettings{}, fmt.Errorf("%s: unknown field (expected leaseSeconds and handoff)", FailoverKey)
	}
	return FailoverSettings{LeaseSeconds: lease, Handoff: handoff}, nil
}

// timings: renew every third of the lease, retry a failed renewal soon, fence at two thirds (leader election's renew deadline).
type timings struct {
	lease, renewInterval, retry, renewDeadline time.Duration
}

func failoverTimings(leaseSeconds int) timings {
	lease := time.Duration(leaseSeconds) * time.Second
	retry := lease / 15
	if retry > time.Second {
		retry = time.Second
	}
	return timings{lease: lease, renewInterval: lease / 3, retry: retry, renewDeadline: lease * 2 / 3}
}

func breaksFirst(s *FailoverSettings) bool { return s != nil && s.Handoff == BreakBeforeMake }
