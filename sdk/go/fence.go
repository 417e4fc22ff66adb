// Fencing (docs/worker-protocol.md W26, W27): what a worker may do while its
// heartbeat is stale, and when it may run its share again. Pure, so the rules
// are tested without clocks; failover.go acts on them.
//
// Under BreakBeforeMake a stale worker stops every job before its pod can turn
// NotReady, and stays fenced until its heartbeat is fresh again and the share
// it reads names no job, whether it ran any when it fenced or not. A newer
// config is not enough: Swarm may have written it before it saw the pod
// NotReady, naming the jobs it then gave to a peer (to this worker too, had it
// run nothing). Swarm empties an expired worker's
// share; what it gains after that comes by the ordinary hand-off. While it
// waits it says so (the fenced annotation on its acknowledgement), and a new
// process of the same pod that finds its predecessor went stale or fenced
// starts that way too. Under MakeBeforeBreak it keeps its jobs (a duplicate is
// allowed there, a gap is not) and only reports itself not ready.
package swarmworker

import "time"

type fence struct {
	fenced    bool
	atVersion int // the config version in force when it fenced (logged on resuming); -1: none read
	// It fenced on going stale, having stopped whatever it ran (or a process before it did): it waits for an empty
	// share. Whether it ran anything then does not matter: Swarm may have given it jobs in a config it wrote while
	// the pod was still Ready, then expired it and given them to a peer.
	stoppedJobs bool
}

var unfenced = fence{atVersion: -1}

// starting: a worker under BreakBeforeMake runs nothing before its first renewal.
var starting = fence{fenced: true, atVersion: -1}

// fenceAt is the fence after the heartbeat went stale at config version.
func fenceAt(f fence, version int) fence {
	at := version
	if f.fenced && f.atVersion >= 0 {
		at = f.atVersion
	}
	return fence{fenced: true, atVersion: at, stoppedJobs: true}
}

// restarted: a new process whose predecessor in this pod went stale or fenced waits, as if it had stopped jobs.
var restarted = fence{fenced: true, atVersion: -1, stoppedJobs: true}

// heldConfig is what mayResume needs of a config text: its version and whether this pod's share names a job;
// none (no file), or unreadable.
type heldConfig struct {
	version    int
	names      bool
	none       bool
	unreadable bool
}

// mayResume: a fenced worker applies a config once its heartbeat is fresh, and, if it fenced on going stale, only one
// whose share names no job (any version: a newer one may still name the jobs Swarm gave a peer meanwhile). A new
// process's first fence (starting) waits for the heartbeat alone.
func mayResume(f fence, fresh bool, c heldConfig) bool {
	if !f.fenced {
		return true
	}
	if !fresh || c.unreadable {
		return false
	}
	return !f.stoppedJobs || c.none || !c.names
}

// startingFence is the fence a new process starts under BreakBeforeMake, from its pod's Leases as it reads them before
// its first renewal (nil: absent): restarted when the acknowledgement, held by this pod, says fenced, or the heartbeat,
// held by this pod, was renewed longer than the renew deadline before now (its predecessor went stale: Swarm may have
// expired the pod). Leases of another pod (uid) say nothing of this one.
func startingFence(podUID string, ack, heartbeat Lease, now time.Time, renewDeadline time.Duration) fence {
	if ack != nil && field(ack, "spec")["holderIdentity"] == podUID && field(field(ack, "metadata"), "annotations")[FencedAnnotation] == FencedValue {
		return restarted
	}
	if heartbeat != nil && field(heartbeat, "spec")["holderIdentity"] == podUID {
		renewed, _ := field(heartbeat, "spec")["renewTime"].(string)
		at, err := time.Parse(time.RFC3339Nano, renewed)
		if err != nil || now.Sub(at) >= renewDeadline {
			return restarted
		}
	}
	return starting
}

// saysFenced: the acknowledgement carries the fenced annotation while it waits for an empty share.
func (f fence) saysFenced() bool { return f.fenced && f.stoppedJobs }

type readinessInput struct {
	settings         *FailoverSettings
	fresh, healthy   bool
	fence            fence
	fencing          bool // the stops it fenced with have not all returned: it still runs them
	loaded, stopping bool
}

// readiness: with failover, not ready while fenced (BreakBeforeMake, once its fencing stops returned)
// or, under MakeBeforeBreak, while stale or unhealthy: the kubelet then marks the pod NotReady.
func readiness(in readinessInput) (bool, string) {
	if in.stopping {
		return false, "stopping"
	}
	if in.settings != nil {
		if breaksFirst(in.settings) {
			if in.fence.fenced && !in.fencing {
				if in.fence.stoppedJobs {
					return false, "fenced: waiting for a fresh heartbeat and an empty share"
				}
				return false, "fenced: waiting for a fresh heartbeat"
			}
		} else {
			if !in.fresh {
				return false, "heartbeat stale"
			}
			if !in.healthy {
				return false, "jobs unhealthy"
			}
		}
	}
	if !in.loaded {
		return false, "share not read yet"
	}
	return true, ""
}
