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

// Read gives the heartbeat Lease by its name, the acknowledgement otherwise.
func (h *heartbeatLeases) Read(ctx context.Context, ns, name string) (Lease, error) {
	if name != HeartbeatLeaseName("w-0") {
		return h.fakeLeases.Read(ctx, ns, name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hb, nil
}

func (h *heartbeatLeases) fenced() bool {
	h.fakeLeases.mu.Lock()
	defer h.fakeLeases.mu.Unlock()
	return field(field(h.fakeLeases.lease, "metadata"), "annotations")[FencedAnnotation] == FencedValue
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

func TestBreakBeforeMakeFencesWhenRenewalsFailAndResumesOnAnEmptyShare(t *testing.T) {
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
	eventually(t, "the acknowledgement says fenced", leases.fenced)
	// Newer, and still naming a: written before Swarm saw the pod NotReady, perhaps; a may be a peer's by now.
	write(t, path, "version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2}\n")
	time.Sleep(300 * time.Millisecond)
	if isRunning() {
		t.Fatal("resumed on a newer config that still names a job")
	}
	if ok, _ := w.Ready(); ok || !leases.fenced() {
		t.Fatal("waiting for an empty share: not ready, and says fenced")
	}
	write(t, path, "version: 3\nworkloads:\n  w-0: {jobs: [], version: 3}\n")
	eventually(t, "the annotation dropped on resuming", func() bool { return !leases.fenced() })
	eventually(t, "ready again", func() bool { ok, _ := w.Ready(); return ok })
	write(t, path, "version: 4\nworkloads:\n  w-0: {jobs: [a], version: 4}\n")
	eventually(t, "a runs again once given", isRunning)
}

// A liveness restart of a frozen worker: the new process finds its pod's heartbeat Lease older than the renew
// deadline, so it starts fenced (its pod may have been expired, its jobs moved) and waits for an empty share.
func TestANewProcessAfterAStaleHeartbeatWaitsForAnEmptyShare(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	leases := &heartbeatLeases{hb: Lease{"metadata": map[string]any{"name": "w-0.heartbeat"}, "spec": map[string]any{"holderIdentity": "uid", "renewTime": microTime(time.Now().Add(-time.Minute))}}}
	w, isRunning, _ := failoverWorker(t, dir, leases, "BreakBeforeMake")
	eventually(t, "fresh", w.fo.fresh)
	eventually(t, "the acknowledgement says fenced, at the version it holds", func() bool { v, _ := leases.says(); return leases.fenced() && v == "1" })
	time.Sleep(300 * time.Millisecond)
	if isRunning() {
		t.Fatal("started the share its file names")
	}
	write(t, path, "version: 2\nworkloads:\n  w-1: {jobs: [a], version: 2}\n")
	eventually(t, "resumed on the empty share", func() bool { v, _ := leases.says(); return !leases.fenced() && v == "2" })
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

// One fenced with an empty share, no config arrived since: fresh again, it reads its file as it is now (W27), and
// the share there names no job, so the fence lifts (Swarm writes no config for a worker with nothing to hand over).
func TestAFenceOverAnEmptyShareLiftsWhenFreshByReadingTheFileAgain(t *testing.T) {
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
	eventually(t, "the annotation dropped", func() bool { return !leases.fenced() })
	if !w.MayAct() {
		t.Fatal("fresh and unfenced: may act")
	}
}

// One that ran nothing when it fenced waits for an empty share too (W27): a config written while its pod was still
// Ready may give it jobs that Swarm then hands a peer once it expires it.
func TestAFenceThatStoppedNothingStillWaitsForAnEmptyShare(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	leases := &heartbeatLeases{}
	w, isRunning, _ := failoverWorker(t, dir, leases, "BreakBeforeMake")
	eventually(t, "a started", isRunning)
	write(t, path, "version: 2\nworkloads:\n  w-0: {jobs: [], version: 2}\n")
	eventually(t, "ready with nothing to run", func() bool { ok, _ := w.Ready(); return ok && !isRunning() })
	leases.setDown(true)
	eventually(t, "not ready once fenced", func() bool { ok, _ := w.Ready(); return !ok })
	// The in-between config: it names a again.
	write(t, path, "version: 3\nworkloads:\n  w-0: {jobs: [a], version: 3}\n")
	time.Sleep(300 * time.Millisecond)
	leases.setDown(false)
	eventually(t, "fresh again", w.fo.fresh)
	eventually(t, "the acknowledgement says fenced", leases.fenced)
	time.Sleep(300 * time.Millisecond)
	if ok, _ := w.Ready(); ok || isRunning() {
		t.Fatal("resumed on a share that names a job")
	}
	write(t, path, "version: 4\nworkloads:\n  w-0: {jobs: [], version: 4}\n")
	eventually(t, "resumed on the empty share: the annotation dropped", func() bool { return !leases.fenced() })
	eventually(t, "ready again", func() bool { ok, _ := w.Ready(); return ok })
	write(t, path, "version: 5\nworkloads:\n  w-0: {jobs: [a], version: 5}\n")
	eventually(t, "a runs again once given", isRunning)
}
