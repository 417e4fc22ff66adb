"""The conformance harness of the Python SDK (sdk/conformance/README.md): an
application whose callbacks report each call on stdout and obey the runner's
commands on stdin (hold a call, fail one, call a job sick), and answers what
the SDK says of itself (health, readiness, may_act)."""
import json
import logging
import os
import sys
import threading

from swarm_worker import Worker

out_lock = threading.Lock()
lock = threading.Lock()
holds = {}
fails = set()
sick = set()
latest = []  # the info of the latest callback: its may_act answers for the worker (W29)


def emit(event):
    with out_lock:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()


def call(callback, job, info):
    with lock:
        latest[:] = [info]
    emit({"event": callback, "job": job})
    key = f"{callback} {job}"
    with lock:
        fail = key in fails
        fails.discard(key)
        hold = holds.get(key)
    if fail:
        raise RuntimeError(f"{key}: told to fail")
    if hold is not None:
        hold.wait()


def seconds(name):
    value = os.environ.get(name)
    return int(value) / 1000 if value else None


# The SDK's log on stderr, which the runner shows when a step fails.
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")
options = {}
if seconds("SWARM_HARNESS_START_DEADLINE_MS"):
    options["start_deadline"] = seconds("SWARM_HARNESS_START_DEADLINE_MS")
if seconds("SWARM_HARNESS_STOP_DEADLINE_MS"):
    options["stop_deadline"] = seconds("SWARM_HARNESS_STOP_DEADLINE_MS")
worker = Worker(
    lambda job, info: call("start", job, info),
    lambda job, info: call("stop", job, info),
    lambda jobs: not sick,
    service_account_dir=os.environ.get("SWARM_HARNESS_SERVICEACCOUNT_DIR"),
    **options,
)


def commands():
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        key = f"{command.get('callback', '')} {command.get('job', '')}"
        cmd = command["cmd"]
        if cmd == "run":
            started.set()
        elif cmd == "hold":
            with lock:
                holds[key] = threading.Event()
        elif cmd == "release":
            with lock:
                hold = holds.pop(key, None)
            if hold is not None:
                hold.set()
        elif cmd == "fail":
            with lock:
                fails.add(key)
        elif cmd == "sick":
            with lock:
                sick.add(command["job"])
        elif cmd == "well":
            with lock:
                sick.discard(command["job"])
        elif cmd == "health":
            emit({"event": "health", "healthy": worker.healthy()})
        elif cmd == "readiness":
            emit({"event": "readiness", "ready": worker.ready()[0]})
        elif cmd == "mayAct":
            with lock:
                info = latest[0] if latest else None
            emit({"event": "mayAct", "mayAct": bool(info and info.may_act())})


started = threading.Event()
threading.Thread(target=commands, daemon=True).start()
emit({"event": "ready"})
started.wait()
worker.run()  # in the main thread: it handles SIGTERM
sys.exit(0)
