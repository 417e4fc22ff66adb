import contextlib
import datetime
import os
import re
import threading
import time

import pytest

from swarm_worker import Worker
from swarm_worker.fence import (BREAK_BEFORE_MAKE, FENCED_ANNOTATION, HEARTBEAT_LABEL, RESTARTED, STARTING, UNFENCED, UNREADABLE,
                                FailoverSettings, fence_at, may_resume, parse_failover, readiness, starting_fence, timings)
from swarm_worker.heartbeat import heartbeat_lease, micro_time
from swarm_worker.kube import ApiError
from swarm_worker.lease import PROTOCOL_ANNOTATION, SWARM_LABEL, VERSION_ANNOTATION, already_says, lease_for

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
    fence = fence_at(UNFENCED, 4)
    assert fence.fenced and fence.at_version == 4 and fence.stopped_jobs
    # Resumes only fresh, on a share that names no job (at any version); no file runs nothing.
    assert not may_resume(fence, False, False) and not may_resume(fence, True, True) and may_resume(fence, True, False)
    assert may_resume(fence, True, None) and not may_resume(fence, True, UNREADABLE)
    assert may_resume(STARTING, True, True) and not may_resume(STARTING, False, True), "a starting worker waits only for its first renewal"
    assert fence.says_fenced and not STARTING.says_fenced and not UNFENCED.says_fenced
    bbm = FailoverSettings(6, BREAK_BEFORE_MAKE)
    assert readiness(bbm, False, True, fence, True, True, False)[0], "ready until its fencing stops returned"
    assert not readiness(bbm, False, True, fence, False, True, False)[0]
    assert not readiness(FailoverSettings(6, "MakeBeforeBreak"), False, True, UNFENCED, False, True, False)[0]


def test_a_new_process_starts_fenced_when_its_predecessor_went_stale_or_fenced():
    now = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)

    def beat(holder, ago):
        return {"spec": {"holderIdentity": holder, "renewTime": micro_time(now - datetime.timedelta(seconds=ago))}}

    def ack(holder, fenced):
        annotations = {VERSION_ANNOTATION: "3", **({FENCED_ANNOTATION: "true"} if fenced else {})}
        return {"metadata": {"annotations": annotations}, "spec": {"holderIdentity": holder}}

    assert starting_fence("uid", None, None, now, 8) == STARTING, "a new pod"
    assert starting_fence("uid", ack("uid", False), beat("uid", 2), now, 8) == STARTING
    assert starting_fence("uid", ack("uid", False), beat("uid", 9), now, 8) == RESTARTED, "its heartbeat older than the renew deadline"
    assert starting_fence("uid", ack("uid", True), beat("uid", 1), now, 8) == RESTARTED, "its acknowledgement says fenced"
    assert starting_fence("uid", ack("other", True), beat("other", 60), now, 8) == STARTING, "another pod's Leases"


def test_the_acknowledgement_says_fenced_and_drops_it():
    fenced = lease_for("w-0", "uid", "ns", "w", 2, [], "2026-01-02T03:04:05Z", None, "2", fenced=True)
    assert fenced["metadata"]["annotations"][FENCED_ANNOTATION] == "true"
    assert already_says(fenced, "uid", 2, [], "2", fenced=True) and not already_says(fenced, "uid", 2, [], "2")
    resumed = lease_for("w-0", "uid", "ns", "w", 2, [], "2026-01-02T03:04:06Z", fenced, "2")
    assert FENCED_ANNOTATION not in resumed["metadata"]["annotations"] and FENCED_ANNOTATION in fenced["metadata"]["annotations"]


def test_heartbeat_lease_is_the_protocols():
    at = datetime.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc)
    lease = heartbeat_lease("w-0", "uid", "ns", "w", 6, at, {"metadata": {"labels": {"team": "x"}}})
    assert lease["metadata"]["name"] == "w-0.heartbeat"
    assert lease["metadata"]["labels"] == {"team": "x", HEARTBEAT_LABEL: "w"} and SWARM_LABEL not in lease["metadata"]["labels"]
    assert lease["spec"]["holderIdentity"] == "uid" and lease["spec"]["leaseDurationSeconds"] == 6 and "acquireTime" in lease["spec"]
    assert re.fullmatch(r"2026-01-02T03:04:05\.000006Z", lease["spec"]["renewTime"])


class FakeHeartbeats:
    """The heartbeat's writes, failing while down."""

    def __init__(self, left=None):
        self.down = False
        self.renewals = 0
        self.left = left  # the heartbeat Lease an earlier process of the pod left


    def _write(self, lease):
        if self.down:
            raise ApiError("cut off", None)
        self.renewals += 1
        return lease

    def read(self, namespace, name, timeout):
        return self.left if name.endswith(".heartbeat") else None

    def create(self, namespace, lease, timeout):
        return self._write(lease)

    replace = create


def write(path, text):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def fenced(leases):
    return ((leases.lease or {}).get("metadata", {}).get("annotations", {}).get(FENCED_ANNOTATION)) == "true"


def test_break_before_make_fences_when_renewals_fail_and_resumes_on_an_empty_share(tmp_path):
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
        eventually("the acknowledgement says fenced", lambda: fenced(leases))
        # Newer, and still naming a: written before Swarm saw the pod NotReady, perhaps; a may be a peer's by now.
        write(config, "version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2}\n")
        time.sleep(0.3)
        assert "a" not in running, "resumed on a newer config that still names a job"
        assert not worker.ready()[0] and fenced(leases)
        write(config, "version: 3\nworkloads:\n  w-0: {jobs: [], version: 3}\n")
        eventually("the annotation dropped on resuming", lambda: not fenced(leases))
        eventually("ready again", lambda: worker.ready()[0])
        write(config, "version: 4\nworkloads:\n  w-0: {jobs: [a], version: 4}\n")
        eventually("a runs again once given", lambda: "a" in running)
    finally:
        worker.terminate(drain=False)
        thread.join(5)


def test_a_new_process_after_a_stale_heartbeat_waits_for_an_empty_share(tmp_path):
    """A liveness restart of a frozen worker: its pod's heartbeat Lease is older than the renew deadline, so the new
    process starts fenced (its pod may have been expired, its jobs moved) and waits for an empty share."""
    old = {"metadata": {"name": "w-0.heartbeat"}, "spec": {"holderIdentity": "uid", "renewTime": micro_time(datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=1))}}
    with failover_worker(tmp_path, "BreakBeforeMake", FakeHeartbeats(old)) as (worker, running, _heartbeats, config, _settings):
        eventually("fresh", worker.failover.fresh)
        eventually("says fenced, at the version it holds", lambda: fenced(worker.ack.api) and worker.ack.api.says()[0] == "1")
        time.sleep(0.3)
        assert "a" not in running, "started the share its file names"
        write(config, "version: 2\nworkloads:\n  w-1: {jobs: [a], version: 2}\n")
        eventually("resumed on the empty share", lambda: not fenced(worker.ack.api) and worker.ack.api.says()[0] == "2")


@contextlib.contextmanager
def failover_worker(tmp_path, handoff, heartbeats=None):
    """Worker w-0 under `handoff`, config.yml giving it job a at version 1: (worker, running jobs, heartbeats,
    config path, failover.yml path); terminated on the way out."""
    config = str(tmp_path / "config.yml")
    settings = str(tmp_path / "failover.yml")
    write(settings, "leaseSeconds: 3\nhandoff: %s\n" % handoff)
    write(config, "version: 1\nworkloads:\n  w-0: {jobs: [a], version: 1}\n")
    heartbeats = heartbeats or FakeHeartbeats()
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


def test_a_fence_over_an_empty_share_lifts_when_fresh_by_reading_the_file_again(tmp_path):
    """One fenced with an empty share, no config arrived since: fresh again, it reads its file as it is now (W27),
    and the share there names no job, so the fence lifts (Swarm writes no config for a worker with nothing to hand
    over)."""
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


def test_a_fence_that_stopped_nothing_still_waits_for_an_empty_share(tmp_path):
    """One that ran nothing when it fenced waits for an empty share too (W27): a config written while its pod was
    still Ready may give it jobs that Swarm then hands a peer once it expires it."""
    with failover_worker(tmp_path, "BreakBeforeMake") as (worker, running, heartbeats, config, _settings):
        eventually("a started", lambda: "a" in running)
        write(config, "version: 2\nworkloads:\n  w-0: {jobs: [], version: 2}\n")
        eventually("ready with nothing to run", lambda: worker.ready()[0] and "a" not in running)
        heartbeats.down = True
        eventually("not ready once fenced", lambda: not worker.ready()[0])
        # The in-between config: it names a again.
        write(config, "version: 3\nworkloads:\n  w-0: {jobs: [a], version: 3}\n")
        time.sleep(0.5)
        heartbeats.down = False
        eventually("fresh again", worker.failover.fresh)
        time.sleep(0.5)
        assert "a" not in running and worker.ready() == (False, "fenced: waiting for a fresh heartbeat and an empty share")
        write(config, "version: 4\nworkloads:\n  w-0: {jobs: [], version: 4}\n")
        eventually("ready again on the empty share", lambda: worker.ready()[0])
        write(config, "version: 5\nworkloads:\n  w-0: {jobs: [a], version: 5}\n")
        eventually("a runs again once given", lambda: "a" in running)
