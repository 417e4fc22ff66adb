// The application's callbacks, timed (docs/worker-protocol.md §6): a start or
// stop not returned by its deadline is overrun and makes the worker unhealthy
// until it returns. Only jobs whose start returned are running, and only
// running jobs are acknowledged.
package swarmworker

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// JobInfo is what a callback learns besides the job's name.
type JobInfo struct {
	// ShareVersion starts the job (a start), or had been running it (a stop).
	ShareVersion int
	// ConfigVersion is the top-level version being applied.
	ConfigVersion int
	// MayAct, with failover, is true while this worker's ownership of its jobs is certain by its own
	// clock (heartbeat fresh, not fenced). A job that acts on the world checks it before each act: a
	// process resumed after a pause learns here, before its timers do, that its jobs may have moved (W29).
	MayAct func() bool
}

type inFlight struct {
	kind, job string
	deadline  time.Time
}

type runner struct {
	start, stop   func(context.Context, string, JobInfo) error
	health        func(jobs []string) bool
	startDeadline time.Duration
	stopDeadline  time.Duration

	mu       sync.Mutex
	running  map[string]bool
	inFlight map[*inFlight]bool
	stopping map[string]chan struct{} // a stop in flight: a second Stop waits for it instead of calling again
}

func (r *runner) timed(kind, job string, deadline time.Duration, call func() error) (err error) {
	entry := &inFlight{kind: kind, job: job, deadline: time.Now().Add(deadline)}
	r.mu.Lock()
	r.inFlight[entry] = true
	r.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s %s panicked: %v", kind, job, p)
		}
		r.mu.Lock()
		delete(r.inFlight, entry)
		r.mu.Unlock()
	}()
	return call()
}

// Start runs start(job); the job runs once it returned without an error.
func (r *runner) Start(job string, info JobInfo) error {
	err := r.timed("start", job, r.startDeadline, func() error { return r.start(context.Background(), job, info) })
	if err == nil {
		r.mu.Lock()
		r.running[job] = true
		r.mu.Unlock()
	}
	return err
}

// Stop runs stop(job) and waits for it however long; an error still ends the job.
func (r *runner) Stop(job string, info JobInfo) error {
	r.mu.Lock()
	if done, ok := r.stopping[job]; ok {
		r.mu.Unlock()
		<-done
		return nil
	}
	done := make(chan struct{})
	r.stopping[job] = done
	r.mu.Unlock()
	err := r.timed("stop", job, r.stopDeadline, func() error { return r.stop(context.Background(), job, info) })
	r.mu.Lock()
	delete(r.running, job)
	delete(r.stopping, job)
	r.mu.Unlock()
	close(done)
	return err
}

func (r *runner) Running() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.running))
	for j := range r.running {
		out = append(out, j)
	}
	sort.Strings(out)
	return out
}

func (r *runner) IsRunning(job string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[job]
}

// Overrun lists the callbacks past their deadline, as "start a", "stop b".
func (r *runner) Overrun() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	now := time.Now()
	for c := range r.inFlight {
		if !now.Before(c.deadline) {
			out = append(out, c.kind+" "+c.job)
		}
	}
	sort.Strings(out)
	return out
}

// Healthy: nothing overrun, and the application's check (if any) passes.
func (r *runner) Healthy() (healthy bool) {
	if len(r.Overrun()) > 0 {
		return false
	}
	if r.health == nil {
		return true
	}
	defer func() {
		if recover() != nil {
			healthy = false
		}
	}()
	return r.health(r.Running())
}
