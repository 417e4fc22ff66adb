// Fencing (docs/worker-protocol.md W26, W27): what a worker may do while its
// heartbeat is stale, and when it may run its share again. Pure, so the rules
// are tested without clocks; failover.go acts on them.
//
// Under BreakBeforeMake a stale worker stops every job before its pod can turn
// NotReady, and stays fenced until its heartbeat is fresh again and, if it
// stopped any job, it has read a config newer than the one it fenced at (Swarm
// writes one when it hands the jobs over): it never runs what its current
// share no longer names. Under MakeBeforeBreak it keeps its jobs (a duplicate
// is allowed there, a gap is not) and only reports itself not ready.
package swarmworker

type fence struct {
	fenced      bool
	atVersion   int // the config version in force when it fenced; -1: none read
	stoppedJobs bool
}

var unfenced = fence{atVersion: -1}

// starting: a worker under BreakBeforeMake runs nothing before its first renewal.
var starting = fence{fenced: true, atVersion: -1}

// fenceAt is the fence after the heartbeat went stale with running jobs at config version.
func fenceAt(f fence, version, running int) fence {
	at := version
	if f.fenced && f.atVersion >= 0 {
		at = f.atVersion
	}
	return fence{fenced: true, atVersion: at, stoppedJobs: f.stoppedJobs || running > 0}
}

// configVersionOf is what mayResume needs of a config text: its version, none (no file), or unreadable.
type configVersionOf struct {
	version    int
	none       bool
	unreadable bool
}

// mayResume: a fenced worker applies a config once its heartbeat is fresh, and, if it stopped jobs, only a newer one.
func mayResume(f fence, fresh bool, v configVersionOf) bool {
	if !f.fenced {
		return true
	}
	if !fresh || v.unreadable {
		return false
	}
	if !f.stoppedJobs || v.none {
		return true
	}
	return f.atVersion < 0 || v.version > f.atVersion
}

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
					return false, "fenced: waiting for a fresh heartbeat and a newer config"
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
