// Applying a config: stops before starts, failed starts retried, and the
// acknowledgement of what runs (docs/worker-protocol.md W8–W12).
package swarmworker

import (
	"context"
	"fmt"
	"sync"
	"time"
)

func (w *Worker) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// deliver queues text (nil: no file); texts not yet applied are replaced by newer ones.
func (w *Worker) deliver(text []byte) {
	w.mu.Lock()
	t := text
	w.pending, w.hasPending = &t, true
	w.mu.Unlock()
	w.signal()
}

func (w *Worker) isStopping() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopping
}

// apply makes the running jobs those of text's share: stops first, then starts; then acknowledges.
func (w *Worker) apply(ctx context.Context, text []byte) {
	var next Share
	version := -1
	if text != nil {
		cfg, err := ParseConfig(text)
		if err != nil {
			w.log.Warn("config rejected, keeping the current share", "error", err.Error())
			return
		}
		next, version = cfg.ShareOf(w.o.Pod), cfg.Version
	} else {
		next = Share{Version: -1}
	}
	w.mu.Lock()
	before := w.share
	w.mu.Unlock()
	keep := map[string]bool{}
	for _, j := range next.Jobs {
		keep[j] = true
	}
	had := map[string]bool{}
	var lost, gained []string
	for _, j := range before.Jobs {
		had[j] = true
		if !keep[j] {
			lost = append(lost, j)
		}
	}
	for _, j := range next.Jobs {
		if !had[j] {
			gained = append(gained, j)
		}
	}
	stopInfo := w.info(before.Version, version)
	var wg sync.WaitGroup
	for _, j := range lost {
		w.mu.Lock()
		_, failed := w.failed[j]
		delete(w.failed, j)
		w.mu.Unlock()
		if failed {
			continue
		}
		wg.Add(1)
		go func(job string) {
			defer wg.Done()
			if err := w.runner.Stop(job, stopInfo); err != nil {
				w.log.Warn("stop failed", "job", job, "err", err.Error())
			}
		}(j)
	}
	wg.Wait()
	if w.isStopping() {
		return
	}
	w.mu.Lock()
	w.share, w.configVersion, w.loaded = next, version, true
	w.mu.Unlock()
	if len(lost)+len(gained) > 0 {
		w.log.Info("share changed", "version", next.Version, "configVersion", version, "gained", gained, "lost", lost)
	}
	startInfo := w.info(next.Version, version)
	for _, j := range gained {
		wg.Add(1)
		go func(job string) {
			defer wg.Done()
			w.startJob(job, startInfo)
		}(j)
	}
	wg.Wait()
	w.acknowledge(ctx)
}

func (w *Worker) startJob(job string, info JobInfo) {
	err := w.runner.Start(job, info)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		delete(w.failed, job)
		return
	}
	w.log.Warn("start failed", "job", job, "err", err.Error())
	attempts := w.failed[job] + 1
	w.failed[job] = attempts
	wait := w.o.RetryBase << (attempts - 1)
	if wait > 30*time.Second || wait <= 0 {
		wait = 30 * time.Second
	}
	time.AfterFunc(wait, func() {
		w.mu.Lock()
		w.retryDue[job] = true
		w.mu.Unlock()
		w.signal()
	})
}

// retry starts the failed jobs whose wait is over and that are still in the share.
func (w *Worker) retry(ctx context.Context) {
	w.mu.Lock()
	var due []string
	for job := range w.retryDue {
		delete(w.retryDue, job)
		if _, failed := w.failed[job]; failed && contains(w.share.Jobs, job) && !w.stopping && w.fo.mayStart() {
			due = append(due, job)
		}
	}
	info := w.info(w.share.Version, w.configVersion)
	w.mu.Unlock()
	if len(due) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, j := range due {
		wg.Add(1)
		go func(job string) {
			defer wg.Done()
			w.startJob(job, info)
		}(j)
	}
	wg.Wait()
	w.acknowledge(ctx)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// acknowledge writes the Lease in the background when what runs differs from the last acknowledgement (W9, W12).
func (w *Worker) acknowledge(ctx context.Context) {
	if w.ack == nil {
		return
	}
	protocol := w.fo.protocol()
	fenced, heldAt := w.fo.saysFenced()
	w.mu.Lock()
	version := w.configVersion
	if version < 0 && fenced {
		version = heldAt // a new process that starts fenced says so at the version it holds back
	}
	if version < 0 || w.stopping {
		w.mu.Unlock()
		return
	}
	var jobs []string
	for _, j := range w.share.Jobs {
		if w.runner.IsRunning(j) {
			jobs = append(jobs, j)
		}
	}
	ack := Acknowledgement{Version: version, Jobs: jobs, Protocol: protocol, Fenced: fenced}
	said := fmt.Sprint(ack.Version, ":", protocol, ":", jobs, ":", fenced)
	if said == w.acknowledged {
		w.mu.Unlock()
		return
	}
	w.acknowledged = said
	w.mu.Unlock()
	go func() {
		if err := w.ack.Acknowledge(context.WithoutCancel(ctx), ack); err != nil {
			w.mu.Lock()
			if w.acknowledged == said {
				w.acknowledged = ""
			}
			w.mu.Unlock()
			w.log.Warn("acknowledgement failed", "version", ack.Version, "err", err.Error())
			return
		}
		w.log.Info("acknowledged", "version", ack.Version, "jobs", len(jobs))
	}()
}

// fenceJobs: the heartbeat went stale under BreakBeforeMake: every job stops now, before the pod can turn
// NotReady, and the share is held as none until the fence lifts (W26, failover.go).
func (w *Worker) fenceJobs(ctx context.Context) {
	w.mu.Lock()
	version := w.configVersion
	w.failed, w.retryDue = map[string]int{}, map[string]bool{}
	w.mu.Unlock()
	w.fo.fenced(version)
	w.log.Warn("heartbeat stale: fencing, stopping every job", "configVersion", version, "running", len(w.runner.Running()))
	w.stopRunning()
	w.mu.Lock()
	w.share = Share{Version: w.share.Version}
	w.mu.Unlock()
	w.fo.fenceDone()
	w.acknowledge(ctx)
}
