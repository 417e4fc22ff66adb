package swarmworker

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseConfigReadsSharesAndMarks(t *testing.T) {
	cfg, err := ParseConfig([]byte("version: 3\nworkloads:\n  w-0:\n    jobs: [b, a]\n    version: 3\n    releasing: [a]\n    awaiting: [c]\n  w-1:\n    jobs: []\n    version: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 3 {
		t.Fatalf("version %d", cfg.Version)
	}
	if got := cfg.ShareOf("w-0"); !reflect.DeepEqual(got.Jobs, []string{"a", "b"}) || got.Version != 3 || !reflect.DeepEqual(got.Awaiting, []string{"c"}) {
		t.Fatalf("w-0: %+v", got)
	}
	if got := cfg.ShareOf("w-9"); len(got.Jobs) != 0 || got.Version != -1 {
		t.Fatalf("missing share: %+v", got)
	}
}

func TestParseConfigReadsNamesAsYAML12Does(t *testing.T) {
	cfg, err := ParseConfig([]byte("version: 1\nworkloads:\n  w-0:\n    version: 1\n    jobs: [on, yes, Off, '0x1f', 12:30, ~x]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.ShareOf("w-0").Jobs; !reflect.DeepEqual(got, []string{"0x1f", "12:30", "Off", "on", "yes", "~x"}) {
		t.Fatalf("jobs %q", got)
	}
}

func TestParseConfigRejectsWhatIsNotTheProtocol(t *testing.T) {
	for _, text := range []string{
		"version: 2\nworkloads: {w-0: {jobs: [a\n",
		"version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2, colour: blue}\n",
		"version: 2\nworkloads:\n  w-0: {jobs: [a, 123], version: 2}\n",
		"version: 2\nworkloads:\n  w-0: {jobs: [a, a], version: 2}\n",
		"version: -1\nworkloads: {}\n",
		"version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2, releasing: [b]}\n",
		"version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2, awaiting: [a]}\n",
		"version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2, released: [a]}\n",
		"version: 2\nworkloads:\n  w-0: {jobs: [a]}\n",
		"- a list\n",
		"workloads: {}\n",
		"version: 1\nworkloads: {}\nextra: 1\n",
		"version: 1\nversion: 2\nworkloads: {}\n",
	} {
		if _, err := ParseConfig([]byte(text)); err == nil {
			t.Errorf("accepted %q", text)
		}
	}
	if _, err := ParseConfig([]byte("version: 1\nworkloads:\n")); err != nil {
		t.Errorf("an empty workloads: %v", err)
	}
}

func TestJobsDigestIsTheProtocols(t *testing.T) {
	if got := JobsDigest([]string{"b", "a"}); got != "sha256:911169ddaaf146aff539f58c26c489af3b892dff0fe283c1c264c65ae5aa59a2" {
		t.Fatal(got)
	}
	if got := JobsDigest(nil); !strings.HasSuffix(got, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") {
		t.Fatal(got)
	}
}

func TestDepartureOf(t *testing.T) {
	cases := []struct {
		pod             string
		start, replicas int
		want            Departure
	}{{"w-3", 0, 1, Leaving}, {"w-0", 0, 1, Replaced}, {"w-5", 5, 2, Replaced}, {"w-4", 5, 2, Leaving}, {"w-0", 0, -1, Ended}}
	for _, c := range cases {
		if got := DepartureOf("w", c.pod, c.start, c.replicas); got != c.want {
			t.Errorf("%s (%d, %d): %v", c.pod, c.start, c.replicas, got)
		}
	}
}

// A Lease an earlier run of the pod wrote is written again: Swarm voids an acknowledgement loaded before the
// pod's containers last started (lease.go AlreadySays).
func TestAlreadySaysOnlyWhatThisProcessWrote(t *testing.T) {
	start := time.Date(2026, 11, 22, 0, 1, 0, 0, time.UTC)
	ack := Acknowledgement{Version: 3, Jobs: []string{"a"}}
	earlier := LeaseFor("w-0", "uid", "ns", "w", ack, start.Add(-time.Minute), nil)
	if AlreadySays(earlier, "uid", ack, start) {
		t.Fatal("an earlier run's Lease counted as this process's")
	}
	mine := LeaseFor("w-0", "uid", "ns", "w", ack, start.Add(time.Second), nil)
	if !AlreadySays(mine, "uid", ack, start) {
		t.Fatal("this process's own Lease not recognised")
	}
}
