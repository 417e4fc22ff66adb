// An example worker on the Go SDK (sdk/go): it "runs" a job by reporting it.
// Each start and stop is one JSON line on stdout, in the reference worker's
// report format (examples/worker/README.md), written by the application's own
// callbacks, so what the pool ran can be rebuilt from the workers' logs
// (test/support/coverage-recorder) and not from the SDK's word. GET /healthz is
// the SDK's health (the liveness probe), GET /readyz its readiness (the
// readiness probe: with failover, protocol 2, NotReady once it fenced or, under
// MakeBeforeBreak, while its heartbeat is stale; docs/failure-detection.md).
// env: the protocol's (docs/worker-protocol.md §2), PORT.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	swarmworker "k8slab.info/swarm/sdk/go"
)

var out sync.Mutex

func report(fields map[string]any) {
	fields["time"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
	fields["pod"] = os.Getenv("POD_NAME")
	if uid := os.Getenv("POD_UID"); uid != "" {
		fields["uid"] = uid
	}
	line, _ := json.Marshal(fields)
	out.Lock()
	defer out.Unlock()
	_, _ = os.Stdout.Write(append(line, '\n'))
}

func job(event string) func(context.Context, string, swarmworker.JobInfo) error {
	return func(_ context.Context, job string, info swarmworker.JobInfo) error {
		report(map[string]any{"event": event, "job": job, "version": info.ShareVersion, "configVersion": info.ConfigVersion})
		return nil
	}
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	report(map[string]any{"event": "worker.started"})
	worker, err := swarmworker.New(swarmworker.Options{Start: job("job.started"), Stop: job("job.stopped"), Logger: log})
	if err != nil {
		log.Error(err.Error())
		os.Exit(2)
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", worker.HealthHandler())
	mux.Handle("/readyz", worker.ReadyHandler())
	server := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := server.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving", "err", err.Error())
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	_ = worker.Run(ctx)
	report(map[string]any{"event": "worker.stopped"})
	_ = server.Close()
}
