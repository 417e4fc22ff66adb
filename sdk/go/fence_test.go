// The fence's pure rules (fence.go) and what the acknowledgement says of a fence (lease.go).
package swarmworker

import (
	"testing"
	"time"
)

func TestFenceRules(t *testing.T) {
	f := fenceAt(unfenced, 4)
	if !f.fenced || f.atVersion != 4 || !f.stoppedJobs {
		t.Fatalf("%+v", f)
	}
	if mayResume(f, false, heldConfig{version: 5}) || mayResume(f, true, heldConfig{version: 5, names: true}) || !mayResume(f, true, heldConfig{version: 3}) {
		t.Fatal("a fenced worker that stopped jobs resumes only fresh, on a share that names no job, newer or not")
	}
	if !mayResume(f, true, heldConfig{none: true}) || mayResume(f, true, heldConfig{unreadable: true}) {
		t.Fatal("no file runs nothing; an unreadable one says nothing")
	}
	if !mayResume(starting, true, heldConfig{version: 1, names: true}) || mayResume(starting, false, heldConfig{version: 1, names: true}) {
		t.Fatal("a starting worker waits only for its first renewal")
	}
	if !f.saysFenced() || starting.saysFenced() || unfenced.saysFenced() {
		t.Fatal("only a worker that waits for an empty share says fenced")
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

func TestANewProcessStartsFencedWhenItsPredecessorWentStaleOrFenced(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := 8 * time.Second
	beat := func(holder string, ago time.Duration) Lease {
		return Lease{"spec": map[string]any{"holderIdentity": holder, "renewTime": microTime(now.Add(-ago))}}
	}
	ack := func(holder string, fenced bool) Lease {
		a := map[string]any{VersionAnnotation: "3"}
		if fenced {
			a[FencedAnnotation] = FencedValue
		}
		return Lease{"metadata": map[string]any{"annotations": a}, "spec": map[string]any{"holderIdentity": holder}}
	}
	for _, c := range []struct {
		what           string
		ack, heartbeat Lease
		want           fence
	}{
		{"a new pod: no Leases", nil, nil, starting},
		{"its heartbeat fresh, its acknowledgement not fenced", ack("uid", false), beat("uid", 2*time.Second), starting},
		{"its heartbeat older than the renew deadline", ack("uid", false), beat("uid", 9*time.Second), restarted},
		{"its acknowledgement says fenced", ack("uid", true), beat("uid", time.Second), restarted},
		{"another pod's stale heartbeat and fenced acknowledgement", ack("other", true), beat("other", time.Minute), starting},
	} {
		if got := startingFence("uid", c.ack, c.heartbeat, now, d); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.what, got, c.want)
		}
	}
}

func TestLeaseForSaysFencedAndDropsIt(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fenced := LeaseFor("w-0", "uid", "ns", "w", Acknowledgement{Version: 2, Protocol: FailoverProtocol, Fenced: true}, at, nil)
	if field(field(fenced, "metadata"), "annotations")[FencedAnnotation] != "true" {
		t.Fatalf("%v", fenced)
	}
	if !AlreadySays(fenced, "uid", Acknowledgement{Version: 2, Protocol: FailoverProtocol, Fenced: true}, at) ||
		AlreadySays(fenced, "uid", Acknowledgement{Version: 2, Protocol: FailoverProtocol}, at) {
		t.Fatal("the fenced annotation is part of what the Lease says")
	}
	resumed := LeaseFor("w-0", "uid", "ns", "w", Acknowledgement{Version: 2, Protocol: FailoverProtocol}, at, fenced)
	if _, ok := field(field(resumed, "metadata"), "annotations")[FencedAnnotation]; ok {
		t.Fatalf("resumed, still says fenced: %v", resumed)
	}
	if _, ok := field(field(fenced, "metadata"), "annotations")[FencedAnnotation]; !ok {
		t.Fatal("the Lease read was changed in place")
	}
}
