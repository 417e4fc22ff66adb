// Package swarmworker is the Swarm worker SDK for Go (docs/worker-protocol.md,
// protocols 1 and 2): the application gives Start and Stop for one job (and,
// optionally, a health check of its jobs); the Worker follows the mounted
// config.yml (or reads it once, restart policy Restart), stops before it
// starts, acknowledges what runs in the pod's Lease, drains or hands over when
// Run's context ends (SIGTERM), and judges its own health. With failover
// (protocol 2: failover.yml beside config.yml) it also renews a heartbeat and
// fences itself when it cannot (heartbeat.go, fence.go, failover.go).
package swarmworker

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Options configure a Worker; the empty strings default to docs/worker-protocol.md §2's environment.
type Options struct {
	Start  func(ctx context.Context, job string, info JobInfo) error // required
	Stop   func(ctx context.Context, job string, info JobInfo) error // required
	Health func(jobs []string) bool                                  // optional: false makes the worker unhealthy

	StartDeadline time.Duration // default 30 s
	StopDeadline  time.Duration // default 10 s

	Pod, PodUID, Namespace, Pool, ConfigPath string
	RestartPolicy                            string // "None" (default) or "Restart"
	DrainConfigMap, DrainStatefulSet         string
	// ServiceAccountDir, APIHost, APIPort: the pod's credentials and the API server (defaults: the pod's).
	ServiceAccountDir, APIHost, APIPort string

	DrainInterval time.Duration // default 500 ms
	RetryBase     time.Duration // a failed start is tried again after 1 s, doubling to 30 s
	Logger        *slog.Logger
	// Leases replaces the Lease calls (tests); Kube is made from the credentials otherwise.
	Leases LeaseAPI
}

// Status is what the worker runs now.
type Status struct {
	Pod           string
	Share         Share
	Running       []string
	ConfigVersion int // -1 before a config
	Stopping      bool
}

// Worker runs one pod's share.
type Worker struct {
	o      Options
	log    *slog.Logger
	kube   *Kube
	ack    *Acknowledger
	runner *runner
	fo     *failover

	wake chan struct{}

	mu            sync.Mutex
	pending       *[]byte // newest text not yet applied; nil: none
	hasPending    bool
	share         Share
	configVersion int
	failed        map[string]int
	stopping      bool
	loaded        bool // a config was read and applied (or found absent)
	acknowledged  string
	retryDue      map[string]bool
}

func env(value, name string) string {
	if value != "" {
		return value
	}
	return os.Getenv(name)
}

// New checks the options and fills them from the environment.
func New(o Options) (*Worker, error) {
	if o.Start == nil || o.Stop == nil {
		return nil, fmt.Errorf("swarmworker: Start and Stop are required")
	}
	o.Pod = env(o.Pod, "POD_NAME")
	if o.Pod == "" {
		return nil, fmt.Errorf("POD_NAME is not set (give it from the downward API: fieldRef metadata.name)")
	}
	o.PodUID = env(o.PodUID, "POD_UID")
	o.Namespace = env(o.Namespace, "POD_NAMESPACE")
	if o.Namespace == "" {
		o.Namespace = MountedNamespace(o.ServiceAccountDir)
	}
	o.Pool = env(o.Pool, "SWARM_POOL")
	o.ConfigPath = env(o.ConfigPath, "CONFIG_PATH")
	if o.ConfigPath == "" {
		o.ConfigPath = "/etc/swarm/config.yml"
	}
	o.RestartPolicy = env(o.RestartPolicy, "SWARM_RESTART_POLICY")
	o.DrainConfigMap = env(o.DrainConfigMap, "DRAIN_CONFIGMAP")
	o.DrainStatefulSet = env(o.DrainStatefulSet, "DRAIN_STATEFULSET")
	if o.StartDeadline == 0 {
		o.StartDeadline = 30 * time.Second
	}
	if o.StopDeadline == 0 {
		o.StopDeadline = 10 * time.Second
	}
	if o.DrainInterval == 0 {
		o.DrainInterval = 500 * time.Millisecond
	}
	if o.RetryBase == 0 {
		o.RetryBase = time.Second
	}
	w := &Worker{o: o, log: o.Logger, wake: make(chan struct{}, 1), configVersion: -1, share: Share{Version: -1}, failed: map[string]int{}, retryDue: map[string]bool{}}
	if w.log == nil {
		w.log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	w.runner = &runner{start: o.Start, stop: o.Stop, health: o.Health, startDeadline: o.StartDeadline, stopDeadline: o.StopDeadline, running: map[string]bool{}, inFlight: map[*inFlight]bool{}, stopping: map[string]chan struct{}{}}
	if k, err := InCluster(o.ServiceAccountDir, o.APIHost, o.APIPort); err == nil {
		w.kube = k
	}
	leases := o.Leases
	if leases == nil && w.kube != nil {
		leases = w.kube.Leases()
	}
	if leases != nil && o.PodUID != "" && o.Namespace != "" {
		pool := PoolOf(o.Pod, o.Pool)
		if pool == "" {
			return nil, fmt.Errorf("cannot tell the pool of pod %s; set SWARM_POOL", o.Pod)
		}
		w.ack = &Acknowledger{API: leases, Pod: o.Pod, PodUID: o.PodUID, Namespace: o.Namespace, Pool: pool}
	} else {
		w.log.Info("not in a cluster with POD_UID and a ServiceAccount token: not acknowledging")
	}
	w.fo = newFailover(o.Pod, o.PodUID, o.ConfigPath, w.log, o.StopDeadline, w.signal)
	hb, _ := leases.(heartbeatAPI)
	if w.ack != nil && hb != nil {
		w.fo.hb = newHeartbeat(&heartbeat{api: hb, pod: o.Pod, podUID: o.PodUID, namespace: o.Namespace, pool: w.ack.Pool,
			load: w.fo.load, healthy: w.runner.Healthy, onStale: w.fo.onStale, onFresh: w.fo.onFresh, inherit: w.fo.inherit,
			onError: func(err error) { w.log.Warn("heartbeat renewal failed", "err", err.Error()) }})
	}
	return w, nil
}

// Healthy is the worker's health (W24): no callback overrun, the application's check passing.
func (w *Worker) Healthy() bool { return w.runner.Healthy() }

// HealthHandler answers 200 while healthy, 503 otherwise: a liveness endpoint.
func (w *Worker) HealthHandler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		if w.Healthy() {
			rw.WriteHeader(http.StatusOK)
			_, _ = rw.Write([]byte("{\"status\":\"ok\"}\n"))
			return
		}
		rw.WriteHeader(http.StatusServiceUnavailable)
		_, _ = rw.Write([]byte("{\"status\":\"unhealthy\"}\n"))
	})
}

// Status is what runs now.
func (w *Worker) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Status{Pod: w.o.Pod, Share: w.share, Running: w.runner.Running(), ConfigVersion: w.configVersion, Stopping: w.stopping}
}

// loop applies the newest text and due retries, one at a time, until stopped.
func (w *Worker) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		}
		for {
			w.fo.judge() // first: a process resumed after a pause learns it is stale before it acts (W28)
			if w.fo.takeFenceDue() {
				w.fenceJobs(ctx)
			}
			if held, reread, fresh := w.fo.takeFresh(); fresh {
				if reread {
					if text, err := fileText(w.o.ConfigPath); err != nil {
						w.log.Warn("reading the config again failed", "err", err.Error())
					} else {
						held = &text
					}
				}
				w.mu.Lock()
				w.acknowledged = "" // one that failed while out of reach was given up: write it again
				if held != nil && !w.hasPending {
					w.pending, w.hasPending = held, true
				}
				w.mu.Unlock()
			}
			w.mu.Lock()
			text, has := w.pending, w.hasPending
			w.pending, w.hasPending = nil, false
			stopping := w.stopping
			w.mu.Unlock()
			if stopping {
				return
			}
			if !has {
				break
			}
			if w.fo.hold(*text) {
				continue
			}
			w.apply(ctx, *text)
		}
		w.retry(ctx)
		w.acknowledge(ctx)
	}
}

// Run follows the config until ctx ends, then drains (with DrainConfigMap: until the jobs are handed over),
// stops every job (each stop bounded by the stop deadline: the process's exit ends what overruns it) and returns.
// Cancel ctx on SIGTERM; for SIGINT (stop without draining) call Run with a ctx that drain ignores: see Terminate.
func (w *Worker) Run(ctx context.Context) error {
	follow, stopFollowing := context.WithCancel(context.Background())
	defer stopFollowing()
	loopDone := make(chan struct{})
	w.fo.begin()
	if w.fo.hb != nil {
		go w.fo.hb.run(follow)
	}
	go w.loop(follow, loopDone)
	go func() {
		readOnce := false
		watchFile(follow, w.o.ConfigPath, func(text []byte) {
			if readOnce {
				return
			}
			// Restart policy: the first config read is the one this pod runs (W7).
			if w.o.RestartPolicy == "Restart" && text != nil {
				readOnce = true
			}
			w.deliver(text)
		}, func(err error) { w.log.Warn("reading the config failed", "err", err.Error()) })
	}()

	<-ctx.Done()
	if w.o.DrainConfigMap != "" && w.kube != nil && w.o.Namespace != "" && !terminatedAtOnce(ctx) {
		w.log.Info("stopping once my jobs are handed over", "configMap", w.o.DrainConfigMap)
		drainer{kube: w.kube, namespace: w.o.Namespace, pod: w.o.Pod, configMap: w.o.DrainConfigMap, key: filepath.Base(w.o.ConfigPath),
			statefulSet: w.o.DrainStatefulSet, interval: w.o.DrainInterval,
			onError: func(err error) { w.log.Warn("reading the config to drain failed", "err", err.Error()) }}.wait(context.Background())
	}
	w.mu.Lock()
	w.stopping = true
	w.mu.Unlock()
	stopFollowing()
	w.signal()

	stopped := make(chan struct{})
	go func() {
		w.stopRunning()
		<-loopDone // a start in flight when we began: stop it once it returned
		w.stopRunning()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(w.o.StopDeadline):
		w.log.Warn("stops overran their deadline at exit", "overrun", w.runner.Overrun())
	}
	return nil
}

func (w *Worker) stopRunning() {
	w.mu.Lock()
	info := w.info(w.share.Version, w.configVersion)
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range w.runner.Running() {
		wg.Add(1)
		go func(job string) {
			defer wg.Done()
			if err := w.runner.Stop(job, info); err != nil {
				w.log.Warn("stop failed", "job", job, "err", err.Error())
			}
		}(j)
	}
	wg.Wait()
}

type atOnceKey struct{}

// AtOnce marks a context whose end stops the worker without draining (SIGINT).
func AtOnce(ctx context.Context) context.Context { return context.WithValue(ctx, atOnceKey{}, true) }

func terminatedAtOnce(ctx context.Context) bool { v, _ := ctx.Value(atOnceKey{}).(bool); return v }
