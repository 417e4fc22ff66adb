"""A worker's failover (docs/worker-protocol.md 8, protocol 2), as worker.py
uses it: reads failover.yml beside config.yml (absent: protocol 1, none of
this), keeps the heartbeat (heartbeat.py) and the fence (fence.py), holds
config back while fenced, and answers readiness and may_act. Its callbacks
only set flags and wake the worker's loop, which stops jobs (fences) and
re-applies held config in order with everything else it does."""
from __future__ import annotations

import datetime
import logging
import os
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

from .config import ConfigError, parse_config
from .fence import (FAILOVER_KEY, FAILOVER_PROTOCOL, STARTING, UNFENCED, UNREADABLE, FailoverSettings, breaks_first, fence_at,
                    may_resume, parse_failover, readiness, starting_fence, timings)
from .heartbeat import Heartbeat
from .lease import PROTOCOL


class Failover:
    def __init__(self, pod: str, pod_uid: Optional[str], config_path: str, log: logging.Logger, stop_deadline: float, wake: Callable[[], None]):
        self.pod, self.pod_uid = pod, pod_uid
        self.path = os.path.join(os.path.dirname(config_path), FAILOVER_KEY)
        self.log, self.stop_deadline, self.wake = log, stop_deadline, wake
        self.heartbeat: Optional[Heartbeat] = None  # None: no heartbeat possible (no Lease API or POD_UID)
        self._lock = threading.RLock()
        self._read: Optional[FailoverSettings] = None  # the last good settings: a garbled file keeps them
        self.fence = STARTING
        self.fencing = False
        self._held: Optional[List[Optional[str]]] = None  # [text] held back while fenced
        self._held_at = -1  # the version of the config held back; -1: none or unreadable
        self._fence_due = False
        self._fresh_due = False
        self._stale = False  # the heartbeat went stale and is not fresh again

    def load(self) -> Optional[FailoverSettings]:
        try:
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            with self._lock:
                self._read = None
            return None
        with self._lock:
            try:
                settings = parse_failover(text)
            except ValueError as error:
                self.log.warning("failover settings rejected, keeping the ones in force: %s", error)
                return self._read
            if settings != self._read:
                t = timings(settings.lease_seconds)
                if self.stop_deadline >= t.lease - t.renew_deadline:
                    self.log.warning("the stop deadline %.1fs is not shorter than the lease less the renew deadline (W30)", self.stop_deadline)
            # Gone stale under MakeBeforeBreak (so not fenced), now told to break first: fence now, as if it went
            # stale under it; otherwise it would answer ready with its jobs and none would move.
            fence_now = self._stale and not self.fence.fenced and breaks_first(settings) and not breaks_first(self._read)
            if fence_now:
                self._fence_due = True
            self._read = settings
        if fence_now:
            self.wake()
        return settings

    def settings(self) -> Optional[FailoverSettings]:
        return self.heartbeat.settings() if self.heartbeat else None

    def fresh(self) -> bool:
        return self.heartbeat is not None and self.heartbeat.fresh()

    def judge(self) -> None:
        """The clock against the renew deadline, now (W28: before the worker acts)."""
        if self.heartbeat:
            self.heartbeat.judge()

    def protocol(self) -> str:
        return FAILOVER_PROTOCOL if self.settings() else PROTOCOL

    def may_act(self) -> bool:
        """W29: ownership certain by the worker's own clock (heartbeat fresh, not fenced), or no failover."""
        if self.settings() is None:
            return True
        with self._lock:
            return self.fresh() and not self.fence.fenced

    def may_start(self) -> bool:
        with self._lock:
            return not breaks_first(self.settings()) or not self.fence.fenced

    def begin(self) -> None:
        """Only a worker that breaks first waits for its first renewal before it runs anything."""
        with self._lock:
            if not breaks_first(self.settings()):
                self.fence = UNFENCED

    def inherit(self, ack: Optional[Dict[str, Any]], heartbeat: Optional[Dict[str, Any]], now: datetime.datetime) -> None:
        """A new process under BreakBeforeMake whose pod's previous process went stale or fenced starts fenced, as if
        it had stopped jobs (starting_fence); given the pod's Leases before the first renewal."""
        settings = self.settings()
        if not breaks_first(settings):
            return
        start = starting_fence(self.pod_uid or "", ack, heartbeat, now, timings(settings.lease_seconds).renew_deadline)
        with self._lock:
            if self.fence.fenced and start.stopped_jobs and not self.fence.stopped_jobs:
                self.fence = start
                self.log.warning("starting fenced: this pod's previous process went stale or fenced; running nothing until my share is empty")

    def says_fenced(self) -> Tuple[bool, int]:
        """The acknowledgement is to carry the fenced annotation (waiting for an empty share, BreakBeforeMake), and the
        version of the config held back, for a process that has applied none yet (-1: none)."""
        with self._lock:
            return breaks_first(self.settings()) and self.fence.says_fenced, self._held_at

    def on_stale(self) -> None:
        with self._lock:
            self._stale = True
        if not breaks_first(self.settings()):
            self.log.warning("heartbeat stale: not ready; keeping my jobs (MakeBeforeBreak)")
            return
        with self._lock:
            self._fence_due = True
        self.wake()

    def on_fresh(self) -> None:
        self.log.info("heartbeat fresh")
        with self._lock:
            self._stale, self._fresh_due = False, True
        self.wake()

    def take_fence_due(self) -> bool:
        with self._lock:
            due, self._fence_due = self._fence_due, False
            return due

    def take_fresh(self) -> Tuple[bool, Optional[List[Optional[str]]], bool]:
        """The heartbeat is fresh again: True, the config held back (if any) to apply again, and whether to read the
        file again: none held and fenced under BreakBeforeMake (W27). The file as it is now may already give this
        worker no job (its share was empty, so Swarm writes nothing new when it expires it), and only a config read
        lifts the fence."""
        with self._lock:
            due, self._fresh_due = self._fresh_due, False
            reread = due and self._held is None and self.fence.fenced and breaks_first(self.settings())
            return due, self._held, reread

    def fenced(self, version: int) -> None:
        with self._lock:
            self.fence, self.fencing = fence_at(self.fence, version), True

    def fence_done(self) -> None:
        with self._lock:
            self.fencing = False

    def hold(self, text: Optional[str]) -> bool:
        """True: ``text`` is held back (fenced); False: apply it."""
        if self.heartbeat is None:
            return False
        # failover.yml may have appeared with this config (the ConfigMap made after the worker started):
        # read it with the config, and under BreakBeforeMake run nothing before the first renewal (W27).
        now = self.load()
        with self._lock:
            if breaks_first(now) and not self.heartbeat.ever_renewed():
                if not self.fence.fenced:
                    self.fence = STARTING
                if not breaks_first(self.heartbeat.settings()):
                    self.heartbeat.kick()  # renew now, not at the next look for the file
            # The file as read now is the freshest word on the handoff (the heartbeat's copy lags up to a renewal).
            if not breaks_first(now):
                # A fence means nothing under MakeBeforeBreak: one closed before the Swarm switched handoff lifts,
                # and the config it held (older than this one) is dropped, never applied when fresh again.
                self.fence, self._held, self._held_at = UNFENCED, None, -1
                return False
            if not self.fence.fenced:
                return False
            names, version = None, -1
            if text is not None:
                try:
                    config = parse_config(text)
                    names, version = len(config.share_of(self.pod).jobs) > 0, config.version
                except ConfigError:
                    names = UNREADABLE
            if may_resume(self.fence, self.heartbeat.fresh(), names):
                if self.fence.stopped_jobs:
                    self.log.info("resuming after a fence at version %s: my share is empty at version %s", self.fence.at_version, version)
                self.fence, self._held, self._held_at = UNFENCED, None, -1
                return False
            self._held, self._held_at = [text], version
            return True

    def ready(self, loaded: bool, stopping: bool, healthy: bool) -> Tuple[bool, str]:
        with self._lock:
            return readiness(self.settings(), self.fresh(), healthy, self.fence, self.fencing, loaded, stopping)
