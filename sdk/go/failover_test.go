package swarmworker

import (
	"context"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

func TestParseFailoverReadsExactlyItsTwoFields(t *testing.T) {
	s, err := ParseFailover([]byte("leaseSeconds: 15\nhandoff: BreakBeforeMake # why\n"))
	if err != nil || s != (FailoverSettings{LeaseSeconds: 15, Handoff: BreakBeforeMake}) {
		t.Fatalf("%v %v", s, err)
	}
	for _, bad := range []string{
		"leaseSeconds: 1\nhandoff: BreakBeforeMake\n",
		"leaseSeconds: soon\nhandoff: MakeBeforeBreak\n",
		"leaseSeconds: 15\nhandoff: Sometimes\n",
		"leaseSeconds: 15\nhandoff: MakeBeforeBreak\nextra: 1\n",
		"leaseSeconds: 15\nleaseSeconds: 16\nhandoff: MakeBeforeBreak\n",
	} {
		if _, err := ParseFailover([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if got := failoverTimings(15); got.renewInterval != 5*time.Second || got.renewDeadline != 10*time.Second || got.retry != time.Second {
		t.Fatalf("timings %+v", got)
	}
}

func TestFenceRules(t *testing.T) {
	f := fenceAt(unfenced, 4, 2)
	if !f.fenced || f.atVersion != 4 || !f.stoppedJobs {
		t.Fatalf("%+v", f)
	}
	if mayResume(f, false, configVersionOf{version: 5}) || mayResume(f, true, configVersionOf{version: 4}) || !mayResume(f, true, configVersionOf{version: 5}) {
		t.Fatal("a fenced worker that stopped jobs resumes only fresh, on a newer config")
	}
	if !mayResume(starting, true, configVersionOf{version: 1}) || mayResume(starting, false, configVersionOf{version: 1}) {
		t.Fatal("a starting worker waits only for its first renewal")
	}
	bbm := &FailoverSettings{LeaseSeconds: 6, Handoff: BreakBeforeMake}
	if ok, _ := readiness(readinessInput{settings: bbm, fence: f, fencing: true, loaded: true}); !ok {
		t.Fatal("ready until its fencing stops returned")
	}
	if ok, _ := readiness(readinessInput{settings: bbm, fence: f, loaded: true}); ok {
		t.Fatal("fenced: not ready")
	}
	mbb := &FailoverSettings{LeaseSeconds: 6, Handoff: MakeBeforeBreak}
	if ok, _ := readiness(readinessInput{settings: mbb, fresh: false, healthy: true, fence: unfenced, loaded: true}); ok {
		t.Fatal("MakeBeforeBreak, stale: not ready")
	}
}

func TestHeartbeatLeaseForIsTheProtocolsLease(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	l := HeartbeatLeaseFor("w-0", "uid", "ns", "w", 6, at, Lease{"metadata": map[string]any{"labels": map[string]any{"team": "x"}}})
	meta, spec := field(l, "metadata"), field(l, "spec")
	labels := field(meta, "labels")
	if meta["name"] != "w-0.heartbeat" || labels[HeartbeatLabel] != "w" || labels[SwarmLabel] != nil || labels["team"] != "x" {
		t.Fatalf("metadata %v", meta)
	}
	if spec["holderIdentity"] != "uid" || spec["leaseDurationSeconds"] != 6 || spec["acquireTime"] == nil {
		t.Fatalf("spec %v", spec)
	}
	if !regexp.MustCompile(`^2026-01-02T03:04:05\.000006Z$`).MatchString(spec["renewTime"].(string)) {
		t.Fatalf("renewTime %v (MicroTime: six fractional digits)", spec["renewTime"])
	}
}

// heartbeatLeases is a Lease store whose writes fail while down.
type heartbeatLeases struct {
	fakeLeases
	mu   sync.Mutex
	down bool
	hb   Lease
	n    int
}

func (h *heartbeatLeases) write(l Lease) (Lease, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return nil, &APIError{Code: 0, Message: "cut off"}
	}
	h.hb, h.n = l, h.n+1
	return l, nil
}

func (h *heartbeatLeases) CreateReturning(_ context.Context, _ string, l Lease) (Lease, error) {
	return h.write(l)
}

func (h *heartbeatLeases) ReplaceReturning(_ context.Context, _ string, l Lease) (Lease, error) {
	return h.write(l)
}

func (h *heartbeatLeases) renewals() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func (h *heartbeatLeases) setDown(down bool) {
	h.mu.Lock()
	h.down = down
	h.mu.Unlock()
}

// failoverWorker runs worker w-0 under handoff over dir (config.yml: job a at version 1), its heartbeat through
// leases; isRunning tells whether job a runs, info the JobInfo of its last call. Stopped at the test's end.
func failoverWorker(t *testing.T, dir string, leases *heartbeatLeases, handoff string) (w *Worker, isRunning func() bool, info func() JobInfo) {
	t.Helper()
	path := filepath.Join(dir, "config.yml")
	write(t, filepath.Join(dir, FailoverKey), "leaseSeconds: 3\nhandoff: "+handoff+"\n")
	write(t, path, "version: 1\nworkloads:\n  w-0: {jobs: [a], version: 1}\n")
	var mu sync.Mutex
	running := map[string]bool{}
	var last JobInfo
	set := func(on bool) func(context.Context, string, JobInfo) error {
		return func(_ context.Context, job string, i JobInfo) error {
			mu.Lock()
			running[job], last = on, i
			mu.Unlock()
			return nil
		}
	}
	w, err := New(Options{Start: set(true), Stop: set(false), Pod: "w-0", PodUID: "uid", Namespace: "ns", ConfigPath: path, Leases: leases})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w, func() bool { mu.Lock(); defer mu.Unlock(); return running["a"] }, func() JobInfo { mu.Lock(); defer mu.Unlock(); return last }
}

func TestBreakBeforeMakeFencesWhenRenewalsFailAndResumesOnANewerConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	leases := &heartbeatLeases{}
	w, isRunning, info := failoverWorker(t, dir, leases, "BreakBeforeMake")

	eventually(t, "a started after the first renewal", isRunning)
	if leases.renewals() == 0 {
		t.Fatal("started before the first renewal (W27)")
	}
	eventually(t, "acknowledged with protocol 2", func() bool {
		leases.fakeLeases.mu.Lock()
		defer leases.fakeLeases.mu.Unlock()
		a := field(field(leases.fakeLeases.lease, "metadata"), "annotations")
		return a[ProtocolAnnotation] == FailoverProtocol
	})
	if ok, _ := w.Ready(); !ok || !w.MayAct() {
		t.Fatal("fresh: ready, may act")
	}
	leases.setDown(true)
	eventually(t, "a stopped by the renew deadline", func() bool { return !isRunning() })
	eventually(t, "not ready once fenced", func() bool { ok, _ := w.Ready(); return !ok })
	if info().MayAct() {
		t.Fatal("stale: may not act (W29)")
	}
	leases.setDown(false)
	eventually(t, "fresh again", w.fo.fresh)
	time.Sleep(300 * time.Millisecond)
	if isRunning() {
		t.Fatal("resumed on the config it fenced at (W27)")
	}
	write(t, path, "version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2}\n")
	eventually(t, "a runs again on the newer config", isRunning)
	eventually(t, "ready again", func() bool { ok, _ := w.Ready(); return ok })
}

// The simulator's corpus fenced-then-switched-to-mbb: fenced under BreakBeforeMake, holding a config, then the
// Swarm switched to MakeBeforeBreak; when fresh again, the older config it held must not be applied.
func TestAFenceLiftsWhenTheSwarmSwitchesToMakeBeforeBreak(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	leases := &heartbeatLeases{}
	w, isRunning, _ := failoverWorker(t, dir, leases, "BreakBeforeMake")

	eventually(t, "a started", isRunning)
	leases.setDown(true)
	eventually(t, "a stopped by the renew deadline", func() bool { return !isRunning() })
	write(t, path, "version: 2\nworkloads:\n  w-0: {jobs: [], version: 2}\n")
	time.Sleep(300 * time.Millisecond) // held: fenced, stale
	write(t, filepath.Join(dir, FailoverKey), "leaseSeconds: 3\nhandoff: MakeBeforeBreak\n")
	write(t, path, "version: 3\nworkloads:\n  w-0: {jobs: [a], version: 3}\n")
	eventually(t, "a runs on version 3 under MakeBeforeBreak, stale or not", isRunning)
	leases.setDown(false)
	eventually(t, "fresh again", w.fo.fresh)
	time.Sleep(500 * time.Millisecond)
	if !isRunning() {
		t.Fatal("fresh again, it applied the older config it had held (version 2) and stopped a")
	}
}

// Gone stale under MakeBeforeBreak (it keeps its jobs), then the Swarm switches to BreakBeforeMake: it fences at
// once, as if it had gone stale under it (else it would answer ready with its jobs and none would move).
func TestAStaleWorkerFencesWhenTheSwarmSwitchesToBreakBeforeMake(t *testing.T) {
	dir := t.TempDir()
	leases := &heartbeatLeases{}
	w, isRunning, _ := failoverWorker(t, dir, leases, "MakeBeforeBreak")
	eventually(t, "a started", isRunning)
	leases.setDown(true)
	eventually(t, "not ready once stale", func() bool { ok, _ := w.Ready(); return !ok })
	if !isRunning() {
		t.Fatal("stale under MakeBeforeBreak, it stopped a")
	}
	write(t, filepath.Join(dir, FailoverKey), "leaseSeconds: 3\nhandoff: BreakBeforeMake\n")
	eventually(t, "a stopped: fenced on reading BreakBeforeMake", func() bool { return !isRunning() })
	if w.MayAct() {
		t.Fatal("fenced: may not act")
	}
}

// One fenced with nothing to stop waits only for a fresh heartbeat (W27): no config need come to lift its fence
// (Swarm writes none for a worker that had no jobs to hand over).
func TestAFenceThatStoppedNothingLiftsOnAFreshHeartbeat(t *testing.T) {
	dir := t.TempDir()
	leases := &heartbeatLeases{}
	w, isRunning, _ := failoverWorker(t, dir, leases, "BreakBeforeMake")
	eventually(t, "a started", isRunning)
	write(t, filepath.Join(dir, "config.yml"), "version: 2\nworkloads:\n  w-0: {jobs: [], version: 2}\n")
	eventually(t, "a stopped on version 2", func() bool { return !isRunning() })
	eventually(t, "ready with nothing to run", func() bool { ok, _ := w.Ready(); return ok })
	leases.setDown(true)
	eventually(t, "not ready once fenced", func() bool { ok, _ := w.Ready(); return !ok })
	leases.setDown(false)
	eventually(t, "ready again with no newer config", func() bool { ok, _ := w.Ready(); return ok })
	if !w.MayAct() {
		t.Fatal("fresh and unfenced: may act")
	}
}
