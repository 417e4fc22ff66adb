"""The application's callbacks, timed (docs/worker-protocol.md 6): a start or stop
not returned by its deadline is overrun and makes the worker unhealthy until it
returns. Only jobs whose start returned are running, and only running jobs are
acknowledged."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Set


@dataclass(frozen=True)
class JobInfo:
    """What a callback learns besides the job's name."""

    share_version: int  # the share version that starts the job, or that had been running it
    config_version: int  # the top-level version being applied
    # With failover: true while this worker's ownership of its jobs is certain by its own clock
    # (heartbeat fresh, not fenced). A job that acts on the world checks it before each act: a
    # process resumed after a pause learns here, before its timers do, that its jobs may have moved (W29).
    may_act: Callable[[], bool] = field(default=lambda: True, compare=False)


Callback = Callable[[str, JobInfo], None]


class Runner:
    def __init__(self, start: Callback, stop: Callback, health: Optional[Callable[[List[str]], bool]], start_deadline: float, stop_deadline: float, log: logging.Logger):
        self._start, self._stop, self._health = start, stop, health
        self.start_deadline, self.stop_deadline, self.log = start_deadline, stop_deadline, log
        self._lock = threading.Lock()
        self._running: Set[str] = set()
        self._in_flight: Dict[object, tuple] = {}
        self._stopping: Dict[str, threading.Event] = {}

    def _timed(self, kind: str, job: str, deadline: float, call: Callable[[], None]) -> None:
        token = object()
        with self._lock:
            self._in_flight[token] = (kind, job, time.monotonic() + deadline)
        try:
            call()
        finally:
            with self._lock:
                del self._in_flight[token]

    def start(self, job: str, info: JobInfo) -> bool:
        """True once start returned: the job runs. False when it raised."""
        try:
            self._timed("start", job, self.start_deadline, lambda: self._start(job, info))
        except Exception as error:  # noqa: BLE001 - the application's failure, reported
            self.log.warning("start failed", extra={"job": job, "error": repr(error)})
            return False
        with self._lock:
            self._running.add(job)
        return True

    def stop(self, job: str, info: JobInfo) -> None:
        """Waits for stop however long (a second stop of the job waits for the first); a raise still ends the job."""
        with self._lock:
            already = self._stopping.get(job)
            if already is None:
                done = self._stopping[job] = threading.Event()
        if already is not None:
            already.wait()
            return
        try:
            self._timed("stop", job, self.stop_deadline, lambda: self._stop(job, info))
        except Exception as error:  # noqa: BLE001
            self.log.warning("stop failed", extra={"job": job, "error": repr(error)})
        with self._lock:
            self._running.discard(job)
            del self._stopping[job]
        done.set()

    def running(self) -> List[str]:
        with self._lock:
            return sorted(self._running)

    def is_running(self, job: str) -> bool:
        with self._lock:
            return job in self._running

    def overrun(self) -> List[str]:
        now = time.monotonic()
        with self._lock:
            return sorted(f"{kind} {job}" for kind, job, deadline in self._in_flight.values() if deadline <= now)

    def healthy(self) -> bool:
        if self.overrun():
            return False
        if self._health is None:
            return True
        try:
            return self._health(self.running()) is not False
        except Exception:  # noqa: BLE001
            return False


def run_all(call: Callable[[str], None], jobs: Iterable[str]) -> List[threading.Thread]:
    """Calls ``call`` for each job at once, each in a thread; returns them started."""
    threads = [threading.Thread(target=call, args=(job,), daemon=True) for job in jobs]
    for t in threads:
        t.start()
    return threads
