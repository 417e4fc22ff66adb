"""An example worker on the Python SDK (sdk/python): it "runs" a job by reporting
it. Each start and stop is one JSON line on stdout, in the reference worker's
report format (examples/worker/README.md), written by the application's own
callbacks, so what the pool ran can be rebuilt from the workers' logs
(test/support/coverage-recorder) and not from the SDK's word. GET /healthz is
the SDK's health (the liveness probe), GET /readyz its readiness (the readiness
probe: with failover, protocol 2, NotReady once it fenced or, under
MakeBeforeBreak, while its heartbeat is stale; docs/failure-detection.md).
env: the protocol's (docs/worker-protocol.md 2), PORT."""
import datetime
import http.server
import json
import logging
import os
import sys
import threading

from swarm_worker import Worker

lock = threading.Lock()


def report(**fields):
    fields["time"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    fields["pod"] = os.environ.get("POD_NAME")
    if os.environ.get("POD_UID"):
        fields["uid"] = os.environ["POD_UID"]
    with lock:
        sys.stdout.write(json.dumps(fields) + "\n")
        sys.stdout.flush()


def job(event):
    return lambda name, info: report(event=event, job=name, version=info.share_version, configVersion=info.config_version)


logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
report(event="worker.started")
worker = Worker(job("job.started"), job("job.stopped"))


class Probes(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the stdlib's name
        if self.path == "/healthz":
            ok = worker.healthy()
            code, body = (200, {"status": "ok"}) if ok else (503, {"status": "unhealthy"})
        elif self.path == "/readyz":
            ready, reason = worker.ready()
            code, body = (200, {"status": "ready"}) if ready else (503, {"status": "not ready", "reason": reason})
        else:
            code, body = 404, {"error": "not found", "status": 404}
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(body).encode() + b"\n")

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("", int(os.environ.get("PORT", "8080"))), Probes)
threading.Thread(target=server.serve_forever, daemon=True).start()
worker.run()
report(event="worker.stopped")
server.shutdown()
