"""An example worker on the Python SDK (sdk/python): it "runs" a job by reporting
it. Each start and stop is one JSON line on stdout, in the reference worker's
report format (examples/worker/README.md), written by the application's own
callbacks, so what the pool ran can be rebuilt from the workers' logs
(test/support/coverage-recorder) and not from the SDK's word. GET /healthz is
the SDK's health. env: the protocol's (docs/worker-protocol.md 2), PORT."""
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


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the stdlib's name
        healthy = self.path == "/healthz" and worker.healthy()
        self.send_response(200 if healthy else 503 if self.path == "/healthz" else 404)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"status":"ok"}\n' if healthy else b'{"status":"unhealthy"}\n')

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("", int(os.environ.get("PORT", "8080"))), Health)
threading.Thread(target=server.serve_forever, daemon=True).start()
worker.run()
report(event="worker.stopped")
server.shutdown()
