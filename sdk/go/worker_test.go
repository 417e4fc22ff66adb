package swarmworker

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

type fakeLeases struct {
	mu     sync.Mutex
	lease  Lease
	rv     int
	writes int
	fail   []int
}

func (f *fakeLeases) failure() error {
	if len(f.fail) == 0 {
		return nil
	}
	code := f.fail[0]
	f.fail = f.fail[1:]
	return &APIError{Code: code, Message: "injected"}
}

func (f *fakeLeases) Read(context.Context, string, string) (Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failure(); err != nil {
		return nil, err
	}
	return f.lease, nil
}

func (f *fakeLeases) Create(_ context.Context, _ string, l Lease) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failure(); err != nil {
		return err
	}
	f.rv++
	f.writes++
	f.lease = l
	return nil
}

func (f *fakeLeases) Replace(ctx context.Context, ns string, l Lease) error {
	return f.Create(ctx, ns, l)
}

func (f *fakeLeases) says() (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := field(field(f.lease, "metadata"), "annotations")
	v, _ := a[VersionAnnotation].(string)
	d, _ := a[DigestAnnotation].(string)
	return v, d
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func TestWorkerStopsBeforeStartsAndAcknowledgesWhatRuns(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	write(t, path, "version: 1\nworkloads:\n  w-0: {jobs: [a, b], version: 1}\n")
	leases := &fakeLeases{fail: []int{503, 409}}
	var mu sync.Mutex
	var calls []string
	record := func(kind string) func(context.Context, string, JobInfo) error {
		return func(_ context.Context, job string, _ JobInfo) error {
			mu.Lock()
			calls = append(calls, kind+" "+job)
			mu.Unlock()
			return nil
		}
	}
	w, err := New(Options{Start: record("start"), Stop: record("stop"), Pod: "w-0", PodUID: "uid", Namespace: "ns", ConfigPath: path, Leases: leases})
	if err != nil {
		t.Fatal(err)
	}
	w.ack.Backoff = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	eventually(t, "version 1 acknowledged", func() bool { v, d := leases.says(); return v == "1" && d == JobsDigest([]string{"a", "b"}) })
	write(t, path, "version: 2\nworkloads:\n  w-0: {jobs: [b, c], version: 2}\n")
	eventually(t, "version 2 acknowledged", func() bool { v, d := leases.says(); return v == "2" && d == JobsDigest([]string{"b", "c"}) })
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := []string{"stop a", "start c"}
	if len(calls) != 6 || calls[2] != want[0] || calls[3] != want[1] {
		t.Fatalf("calls %q", calls)
	}
	if !w.Healthy() {
		t.Fatal("unhealthy")
	}
}

func TestAStopPastItsDeadlineMakesTheWorkerUnhealthy(t *testing.T) {
	release := make(chan struct{})
	w, err := New(Options{
		Start:        func(context.Context, string, JobInfo) error { return nil },
		Stop:         func(context.Context, string, JobInfo) error { <-release; return nil },
		Pod:          "w-0",
		ConfigPath:   filepath.Join(t.TempDir(), "none.yml"),
		StopDeadline: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.runner.Start("a", JobInfo{}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.runner.Stop("a", JobInfo{}) }()
	eventually(t, "unhealthy", func() bool { return !w.Healthy() })
	if !w.runner.IsRunning("a") {
		t.Fatal("a stop that has not returned leaves the job running")
	}
	close(release)
	eventually(t, "healthy again", w.Healthy)
}
