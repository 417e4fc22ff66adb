// The conformance harness of the Go SDK (sdk/conformance/README.md): an
// application whose callbacks report each call on stdout and obey the runner's
// commands on stdin (hold a call, fail one, call a job sick), and answers what
// the SDK says of itself (health, readiness, MayAct).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	swarmworker "k8slab.info/swarm/sdk/go"
)

var (
	outMu sync.Mutex
	mu    sync.Mutex
	holds = map[string]chan struct{}{}
	fails = map[string]bool{}
	sick  = map[string]bool{}
	// latest is the info of the latest callback: its MayAct answers for the worker (W29).
	latest swarmworker.JobInfo
)

func emit(event map[string]any) {
	b, _ := json.Marshal(event)
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func call(callback, job string, info swarmworker.JobInfo) error {
	mu.Lock()
	latest = info
	mu.Unlock()
	emit(map[string]any{"event": callback, "job": job})
	key := callback + " " + job
	mu.Lock()
	fail := fails[key]
	delete(fails, key)
	hold := holds[key]
	mu.Unlock()
	if fail {
		return fmt.Errorf("%s: told to fail", key)
	}
	if hold != nil {
		<-hold
	}
	return nil
}

func ms(name string) time.Duration {
	n, _ := strconv.Atoi(os.Getenv(name))
	return time.Duration(n) * time.Millisecond
}

func main() {
	worker, err := swarmworker.New(swarmworker.Options{
		Start: func(_ context.Context, job string, info swarmworker.JobInfo) error { return call("start", job, info) },
		Stop:  func(_ context.Context, job string, info swarmworker.JobInfo) error { return call("stop", job, info) },
		Health: func([]string) bool {
			mu.Lock()
			defer mu.Unlock()
			return len(sick) == 0
		},
		ServiceAccountDir: os.Getenv("SWARM_HARNESS_SERVICEACCOUNT_DIR"),
		StartDeadline:     ms("SWARM_HARNESS_START_DEADLINE_MS"),
		StopDeadline:      ms("SWARM_HARNESS_STOP_DEADLINE_MS"),
		// The SDK's log on stderr, which the runner shows when a step fails.
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, _ := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	emit(map[string]any{"event": "ready"})
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		var c struct{ Cmd, Callback, Job string }
		if json.Unmarshal(lines.Bytes(), &c) != nil {
			continue
		}
		key := c.Callback + " " + c.Job
		switch c.Cmd {
		case "run":
			go func() {
				_ = worker.Run(ctx)
				os.Exit(0)
			}()
		case "hold":
			mu.Lock()
			holds[key] = make(chan struct{})
			mu.Unlock()
		case "release":
			mu.Lock()
			if h := holds[key]; h != nil {
				close(h)
				delete(holds, key)
			}
			mu.Unlock()
		case "fail":
			mu.Lock()
			fails[key] = true
			mu.Unlock()
		case "sick", "well":
			mu.Lock()
			if c.Cmd == "sick" {
				sick[c.Job] = true
			} else {
				delete(sick, c.Job)
			}
			mu.Unlock()
		case "health":
			emit(map[string]any{"event": "health", "healthy": worker.Healthy()})
		case "readiness":
			ready, _ := worker.Ready()
			emit(map[string]any{"event": "readiness", "ready": ready})
		case "mayAct":
			mu.Lock()
			info := latest
			mu.Unlock()
			emit(map[string]any{"event": "mayAct", "mayAct": info.MayAct != nil && info.MayAct()})
		}
	}
	select {} // stdin closed: keep running until the worker stops
}
