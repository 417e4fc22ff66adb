// A worker's failover (docs/worker-protocol.md §8, protocol 2), as worker.go
// uses it: reads failover.yml beside config.yml (absent: protocol 1, none of
// this), keeps the heartbeat (heartbeat.go) and the fence (fence.go), holds
// config back while fenced, and answers readiness and MayAct. Its callbacks
// only set flags and wake the worker's loop, which stops jobs (fences) and
// re-applies held config in order with everything else it does.
package swarmworker

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

type failover struct {
	hb           *heartbeat // nil: no heartbeat possible (no Lease API or POD_UID), hence no failover
	pod, podUID  string
	path         string
	log          *slog.Logger
	stopDeadline time.Duration
	wake         func()

	mu       sync.Mutex
	read     *FailoverSettings // the last good settings: a garbled file keeps them
	fence    fence
	fencing  bool
	held     *[]byte // a config held back while fenced (nil slice: no file)
	heldAt   int     // the version of the config held back; -1: none or unreadable
	fenceDue bool
	freshDue bool
	stale    bool // the heartbeat went stale and is not fresh again
}

func newFailover(pod, podUID, configPath string, log *slog.Logger, stopDeadline time.Duration, wake func()) *failover {
	return &failover{pod: pod, podUID: podUID, path: filepath.Join(filepath.Dir(configPath), FailoverKey), log: log, stopDeadline: stopDeadline, wake: wake, fence: starting, heldAt: -1}
}

// load reads failover.yml: nil without it; a file that cannot be read keeps the settings in force.
func (f *failover) load() *FailoverSettings {
	text, err := os.ReadFile(f.path)
	fenceNow := false
	defer func() {
		if fenceNow {
			f.wake()
		}
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.read = nil
		return nil
	}
	s, err := ParseFailover(text)
	if err != nil {
		f.log.Warn("failover settings rejected, keeping the ones in force", "err", err.Error())
		return f.read
	}
	if f.read == nil || *f.read != s {
		if t := failoverTimings(s.LeaseSeconds); f.stopDeadline >= t.lease-t.renewDeadline {
			f.log.Warn("the stop deadline is not shorter than the lease less the renew deadline (W30)", "stopDeadline", f.stopDeadline.String(), "leaseSeconds", s.LeaseSeconds)
		}
	}
	// Gone stale under MakeBeforeBreak (so not fenced), now told to break first: fence now, as if it went stale
	// under it; otherwise it would answer ready with its jobs and none would move (as the TypeScript SDK).
	if f.stale && !f.fence.fenced && breaksFirst(&s) && !breaksFirst(f.read) {
		f.fenceDue, fenceNow = true, true
	}
	f.read = &s
	return f.read
}

func (f *failover) settings() *FailoverSettings {
	if f.hb == nil {
		return nil
	}
	return f.hb.Settings()
}

func (f *failover) fresh() bool { return f.hb != nil && f.hb.Fresh() }

// judge: the heartbeat's clock against the renew deadline, now (W28: before the worker acts).
func (f *failover) judge() {
	if f.hb != nil {
		f.hb.judge()
	}
}

// protocol is what the acknowledgement announces: 2 while failover is on.
func (f *failover) protocol() string {
	if f.settings() != nil {
		return FailoverProtocol
	}
	return Protocol
}

// mayAct: ownership certain by the worker's own clock (heartbeat fresh, not fenced) or no failover (W29).
func (f *failover) mayAct() bool {
	if f.settings() == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fresh() && !f.fence.fenced
}

// mayStart: a start (a retry) is allowed now.
func (f *failover) mayStart() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !breaksFirst(f.settings()) || !f.fence.fenced
}

// begin: only a worker that breaks first waits for its first renewal before it runs anything.
func (f *failover) begin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !breaksFirst(f.settings()) {
		f.fence = unfenced
	}
}

// inherit: a new process under BreakBeforeMake whose pod's previous process went stale or fenced starts fenced
// as if it had stopped jobs (startingFence); given the pod's Leases before the first renewal.
func (f *failover) inherit(ack, heartbeat Lease, now time.Time) {
	s := f.settings()
	if !breaksFirst(s) {
		return
	}
	next := startingFence(f.podUID, ack, heartbeat, now, failoverTimings(s.LeaseSeconds).renewDeadline)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fence.fenced && next.stoppedJobs && !f.fence.stoppedJobs {
		f.fence = next
		f.log.Warn("starting fenced: this pod's previous process went stale or fenced; running nothing until my share is empty")
	}
}

// saysFenced: the acknowledgement is to carry the fenced annotation (waiting for an empty share, BreakBeforeMake),
// and the version of the config held back, for a process that has applied none yet (-1: none).
func (f *failover) saysFenced() (bool, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return breaksFirst(f.settings()) && f.fence.saysFenced(), f.heldAt
}

func (f *failover) onStale() {
	f.mu.Lock()
	f.stale = true
	f.mu.Unlock()
	if !breaksFirst(f.settings()) {
		f.log.Warn("heartbeat stale: not ready; keeping my jobs (MakeBeforeBreak)")
		return
	}
	f.mu.Lock()
	f.fenceDue = true
	f.mu.Unlock()
	f.wake()
}

func (f *failover) onFresh() {
	f.log.Info("heartbeat fresh")
	f.mu.Lock()
	f.stale, f.freshDue = false, true
	f.mu.Unlock()
	f.wake()
}

// takeFenceDue: the heartbeat went stale under BreakBeforeMake: the loop fences now.
func (f *failover) takeFenceDue() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	due := f.fenceDue
	f.fenceDue = false
	return due
}

// takeFresh: the heartbeat is fresh again; the config held back, if any, to apply again; reread: none held and
// fenced under BreakBeforeMake, so the file as it is now is to be read again (W27): it may already give this
// worker no job (its share was empty, so Swarm writes nothing new when it expires it), and only a config read
// lifts the fence.
func (f *failover) takeFresh() (held *[]byte, reread, due bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	due, held = f.freshDue, f.held
	f.freshDue = false
	reread = due && held == nil && f.fence.fenced && breaksFirst(f.settings())
	return held, reread, due
}

// fenced records the fence at the config version, and that its stops are under way.
func (f *failover) fenced(version int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fence, f.fencing = fenceAt(f.fence, version), true
}

func (f *failover) fenceDone() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fencing = false
}

// hold: true when text is held back (fenced); false: apply it.
func (f *failover) hold(text []byte) bool {
	if f.hb == nil {
		return false
	}
	// failover.yml may have appeared with this config (the ConfigMap made after the worker started):
	// read it with the config, and under BreakBeforeMake run nothing before the first renewal (W27).
	now := f.load()
	f.mu.Lock()
	defer f.mu.Unlock()
	if breaksFirst(now) && !f.hb.EverRenewed() {
		if !f.fence.fenced {
			f.fence = starting
		}
		if !breaksFirst(f.hb.Settings()) {
			f.hb.Kick() // renew now, not at the next look for the file
		}
	}
	// The file as read now is the freshest word on the handoff (the heartbeat's copy lags up to a renewal).
	if !breaksFirst(now) {
		// A fence means nothing under MakeBeforeBreak: one closed before the Swarm switched handoff lifts, and
		// the config it held (older than this one) is dropped, never applied when the heartbeat is fresh again.
		f.fence, f.held, f.heldAt = unfenced, nil, -1
		return false
	}
	if !f.fence.fenced {
		return false
	}
	v := heldConfig{version: -1, none: text == nil}
	if text != nil {
		if cfg, err := ParseConfig(text); err != nil {
			v.unreadable = true
		} else {
			v.version, v.names = cfg.Version, len(cfg.ShareOf(f.pod).Jobs) > 0
		}
	}
	if mayResume(f.fence, f.hb.Fresh(), v) {
		if f.fence.stoppedJobs {
			f.log.Info("resuming after a fence: my share is empty", "configVersion", v.version, "fencedAt", f.fence.atVersion)
		}
		f.fence, f.held, f.heldAt = unfenced, nil, -1
		return false
	}
	t := text
	f.held, f.heldAt = &t, v.version
	return true
}

func (f *failover) ready(loaded, stopping, healthy bool) (bool, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return readiness(readinessInput{settings: f.settings(), fresh: f.fresh(), healthy: healthy, fence: f.fence, fencing: f.fencing, loaded: loaded, stopping: stopping})
}

// info is what a callback learns: the versions, and MayAct.
func (w *Worker) info(shareVersion, configVersion int) JobInfo {
	return JobInfo{ShareVersion: shareVersion, ConfigVersion: configVersion, MayAct: w.fo.mayAct}
}

// Ready is the worker's readiness (W26): with failover, false while fenced or, under MakeBeforeBreak,
// while its heartbeat is stale or its jobs unhealthy; and false before it read its share. The reason says why.
func (w *Worker) Ready() (bool, string) {
	w.mu.Lock()
	loaded, stopping := w.loaded, w.stopping
	w.mu.Unlock()
	return w.fo.ready(loaded, stopping, w.runner.Healthy())
}

// ReadyHandler answers 200 while ready, 503 otherwise: a readiness endpoint.
func (w *Worker) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		ready, reason := w.Ready()
		rw.Header().Set("Content-Type", "application/json")
		if ready {
			rw.WriteHeader(http.StatusOK)
			_, _ = rw.Write([]byte("{\"status\":\"ready\"}\n"))
			return
		}
		rw.WriteHeader(http.StatusServiceUnavailable)
		b, _ := json.Marshal(map[string]string{"status": "not ready", "reason": reason})
		_, _ = rw.Write(append(b, '\n'))
	})
}

// MayAct is JobInfo.MayAct for code outside a callback.
func (w *Worker) MayAct() bool { return w.fo.mayAct() }
