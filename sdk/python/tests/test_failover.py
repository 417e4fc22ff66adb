import contextlib
import datetime
import os
import re
import threading
import time

import pytest

from swarm_worker import Worker
from swarm_worker.fence import (BREAK_BEFORE_MAKE, HEARTBEAT_LABEL, STARTING, UNFENCED, FailoverSettings, fence_at, may_resume,
                                parse_failover, readiness, timings)
from swarm_worker.heartbeat import heartbeat_lease
from swarm_worker.kube import ApiError
from swarm_worker.lease import PROTOCOL_ANNOTATION, SWARM_LABEL

from test_worker import FakeLeases, eventually


def test_failover_yml_is_exactly_its_two_fields():
    assert parse_failover("leaseSeconds: 15\nhandoff: BreakBeforeMake # why\n") == FailoverSettings(15, BREAK_BEFORE_MAKE)
    for bad in ["leaseSeconds: 1\nhandoff: BreakBeforeMake\n", "leaseSeconds: soon\nhandoff: MakeBeforeBreak\n",
                "leaseSeconds: 15\nhandoff: Sometimes\n", "leaseSeconds: 15\nhandoff: MakeBeforeBreak\nextra: 1\n",
                "leaseSeconds: 15\nleaseSeconds: 16\nhandoff: MakeBeforeBreak\n"]:
        with pytest.raises(ValueError):
            parse_failover(bad)
    t = timings(15)
    assert (t.renew_interval, t.renew_deadline, t.retry) == (5, 10, 1)


def test_fence_rules():
    fence = fence_at(UNFENCED, 4, 2)
    assert fence.fenced and fence.at_version == 4 and fence.stopped_jobs
    assert not may_resume(fence, False, 5) and not may_resume(fence, True, 4) and may_resume(fence, True, 5)
    assert may_resume(STARTING, True, 1) and not may_resume(STARTING, False, 1)
    bbm = FailoverSettings(6, BREAK_BEFORE_MAKE)
    assert readiness(bbm, False, True, fence, True, True, False)[0], "ready until its fencing stops returned"
    assert not readiness(bbm, False, True, fence, False, True, False)[0]
    assert not readiness(FailoverSettings(6, "MakeBeforeBreak"), False, True, UNFENCED, False, True, False)[0]


def test_heartbeat_lease_is_the_protocols():
    at = datetime.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc)
    lease = heartbeat_lease("w-0", "uid", "ns", "w", 6, at, {"metadata": {"labels": {"team": "x"}}})
    assert lease["metadata"]["name"] == "w-0.heartbeat"
    assert lease["metadata"]["labels"] == {"team": "x", HEARTBEAT_LABEL: "w"} and SWARM_LABEL not in lease["metadata"]["labels"]
    assert lease["spec"]["holderIdentity"] == "uid" and lease["spec"]["leaseDurationSeconds"] == 6 and "acquireTime" in lease["spec"]
    assert re.fullmatch(r"2026-01-02T03:04:05\.000006Z", lease["spec"]["renewTime"])


class FakeHeartbeats:
    """The heartbeat's writes, failing while down."""

    def __init__(self):
        self.down = False
        self.renewals = 0

    def _write(self, lease):
        if self.down:
            raise ApiError("cut off", None)
        self.renewals += 1
        return lease

    def read(self, namespace, name, timeout):
        return None

    def create(self, namespace, lease, timeout):
        return self._write(lease)

    replace = create


def write(path, text):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def test_break_before_make_fences_when_renewals_fail_and_resumes_on_a_newer_config(tmp_path):
    config = str(tmp_path / "config.yml")
    write(str(tmp_path / "failover.yml"), "leaseSeconds: 3\nhandoff: BreakBeforeMake\n")
    write(config, "version: 1\nworkloads:\n  w-0: {jobs: [a], version: 1}\n")
    leases, heartbeats = FakeLeases(), FakeHeartbeats()
    running, infos = set(), []

    def start(job, info):
        assert heartbeats.renewals > 0, "started before the first renewal (W27)"
        running.add(job)
        infos.append(info)

    def stop(job, info):
        running.discard(job)
        infos.append(info)

    worker = Worker(start, stop, pod="w-0", pod_uid="uid", namespace="ns", config_path=config, leases=leases, heartbeat_api=heartbeats)
    thread = threading.Thread(target=worker.run, kwargs={"handle_signals": False}, daemon=True)
    thread.start()
    try:
        eventually("a started", lambda: "a" in running)
        eventually("acknowledged with protocol 2", lambda: ((leases.lease or {}).get("metadata", {}).get("annotations", {}).get(PROTOCOL_ANNOTATION)) == "2")
        assert worker.ready()[0] and worker.may_act()
        heartbeats.down = True
        eventually("a stopped by the renew deadline", lambda: "a" not in running)
        eventually("not ready once fenced", lambda: not worker.ready()[0])
        assert not infos[-1].may_act(), "stale: may not act (W29)"
        heartbeats.down = False
        eventually("fresh again", worker.failover.fresh)
        time.sleep(0.3)
        assert "a" not in running, "resumed on the config it fenced at (W27)"
        write(config, "version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2}\n")
        eventually("a runs again on the newer config", lambda: "a" in running)
        eventually("ready again", lambda: worker.ready()[0])
    finally:
        worker.terminate(drain=False)
        thread.join(5)


@contextlib.contextmanager
def failover_worker(tmp_path, handoff):
    """Worker w-0 under `handoff`, config.yml giving it job a at version 1: (worker, running jobs, heartbeats,
    config path, failover.yml path); terminated on the way out."""
    config = str(tmp_path / "config.yml")
    settings = str(tmp_path / "failover.yml")
    write(settings, "leaseSeconds: 3\nhandoff: %s\n" % handoff)
    write(config, "version: 1\nworkloads:\n  w-0: {jobs: [a], version: 1}\n")
    heartbeats = FakeHeartbeats()
    running = set()
    worker = Worker(lambda job, info: running.add(job), lambda job, info: running.discard(job), pod="w-0", pod_uid="uid", namespace="ns", config_path=config, leases=FakeLeases(), heartbeat_api=heartbeats)
    thread = threading.Thread(target=worker.run, kwargs={"handle_signals": False}, daemon=True)
    thread.start()
    try:
        yield worker, running, heartbeats, config, settings
    finally:
        worker.terminate(drain=False)
        thread.join(5)


def test_a_fence_lifts_when_the_swarm_switches_to_make_before_break(tmp_path):
    """The simulator's corpus fenced-then-switched-to-mbb: fenced under BreakBeforeMake, holding a config, then
    the Swarm switched to MakeBeforeBreak; when fresh again, the older config it held must not be applied."""
    with failover_worker(tmp_path, "BreakBeforeMake") as (worker, running, heartbeats, config, settings):
        eventually("a started", lambda: "a" in running)
        heartbeats.down = True
        eventually("a stopped by the renew deadline", lambda: "a" not in running)
        write(config, "version: 2\nworkloads:\n  w-0: {jobs: [], version: 2}\n")
        time.sleep(0.3)  # held: fenced, stale
        write(settings, "leaseSeconds: 3\nhandoff: MakeBeforeBreak\n")
        write(config, "version: 3\nworkloads:\n  w-0: {jobs: [a], version: 3}\n")
        eventually("a runs on version 3 under MakeBeforeBreak, stale or not", lambda: "a" in running)
        heartbeats.down = False
        eventually("fresh again", worker.failover.fresh)
        time.sleep(0.5)
        assert "a" in running, "fresh again, it applied the older config it had held (version 2) and stopped a"


def test_a_stale_worker_fences_when_the_swarm_switches_to_break_before_make(tmp_path):
    """Gone stale under MakeBeforeBreak (it keeps its jobs), then the Swarm switches to BreakBeforeMake: it fences
    at once, as if it had gone stale under it (else it would answer ready with its jobs and none would move)."""
    with failover_worker(tmp_path, "MakeBeforeBreak") as (worker, running, heartbeats, _config, settings):
        eventually("a started", lambda: "a" in running)
        heartbeats.down = True
        eventually("not ready once stale", lambda: not worker.ready()[0])
        assert "a" in running, "stale under MakeBeforeBreak, it stopped a"
        write(settings, "leaseSeconds: 3\nhandoff: BreakBeforeMake\n")
        eventually("a stopped: fenced on reading BreakBeforeMake", lambda: "a" not in running)
        assert not worker.may_act()


def test_a_fence_that_stopped_nothing_lifts_on_a_fresh_heartbeat(tmp_path):
    """One fenced with nothing to stop waits only for a fresh heartbeat (W27): no config need come to lift its
    fence (Swarm writes none for a worker that had no jobs to hand over)."""
    with failover_worker(tmp_path, "BreakBeforeMake") as (worker, running, heartbeats, config, _settings):
        eventually("a started", lambda: "a" in running)
        write(config, "version: 2\nworkloads:\n  w-0: {jobs: [], version: 2}\n")
        eventually("a stopped on version 2", lambda: "a" not in running)
        eventually("ready with nothing to run", lambda: worker.ready()[0])
        heartbeats.down = True
        eventually("not ready once fenced", lambda: not worker.ready()[0])
        heartbeats.down = False
        eventually("ready again with no newer config", lambda: worker.ready()[0])
        assert worker.may_act()
