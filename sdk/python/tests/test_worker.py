import os
import threading
import time

from swarm_worker import Worker, jobs_digest
from swarm_worker.kube import ApiError
from swarm_worker.lease import DIGEST_ANNOTATION, VERSION_ANNOTATION, Acknowledger


class FakeLeases:
    def __init__(self, failures=()):
        self.lease = None
        self.failures = list(failures)
        self.writes = 0

    def _maybe_fail(self):
        if self.failures:
            raise ApiError("injected", self.failures.pop(0))

    def read(self, namespace, name):
        self._maybe_fail()
        return self.lease

    def create(self, namespace, lease):
        self._maybe_fail()
        self.lease, self.writes = lease, self.writes + 1

    replace = create

    def says(self):
        a = (self.lease or {}).get("metadata", {}).get("annotations", {})
        return a.get(VERSION_ANNOTATION), a.get(DIGEST_ANNOTATION)


def eventually(what, ok, timeout=10):
    deadline = time.monotonic() + timeout
    while not ok():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def test_stops_before_starts_and_acknowledges_what_runs(tmp_path):
    path = str(tmp_path / "config.yml")
    write(path, "version: 1\nworkloads:\n  w-0: {jobs: [a, b], version: 1}\n")
    leases = FakeLeases(failures=[503, 409])
    calls = []
    worker = Worker(lambda job, info: calls.append(f"start {job}"), lambda job, info: calls.append(f"stop {job}"),
                    pod="w-0", pod_uid="uid", namespace="ns", config_path=path, leases=leases)
    worker.ack.backoff = 0.001
    runner = threading.Thread(target=worker.run, kwargs={"handle_signals": False})
    runner.start()
    eventually("version 1", lambda: leases.says() == ("1", jobs_digest(["a", "b"])))
    write(path, "version: 2\nworkloads:\n  w-0: {jobs: [b, c], version: 2}\n")
    eventually("version 2", lambda: leases.says() == ("2", jobs_digest(["b", "c"])))
    worker.terminate()
    runner.join(5)
    assert not runner.is_alive()
    assert sorted(calls[:2]) == ["start a", "start b"]
    assert calls[2:4] == ["stop a", "start c"]
    assert sorted(calls[4:]) == ["stop b", "stop c"]


def test_a_stop_past_its_deadline_makes_the_worker_unhealthy(tmp_path):
    release = threading.Event()
    worker = Worker(lambda job, info: None, lambda job, info: release.wait(), pod="w-0", config_path=str(tmp_path / "none.yml"), stop_deadline=0.05)
    assert worker.runner.start("a", None)
    threading.Thread(target=worker.runner.stop, args=("a", None), daemon=True).start()
    eventually("unhealthy", lambda: not worker.healthy())
    assert worker.runner.is_running("a")
    release.set()
    eventually("healthy again", worker.healthy)


def test_a_refused_write_is_raised_and_only_the_newest_queued_is_written():
    leases = FakeLeases(failures=[403])
    ack = Acknowledger(leases, "w-0", "uid", "ns", "w", backoff=0.001)
    try:
        ack.acknowledge(1, ["a"])
        raise AssertionError("a 403 must be raised")
    except ApiError as error:
        assert error.code == 403
    ack.acknowledge(2, ["a"])
    assert leases.says() == ("2", jobs_digest(["a"]))
