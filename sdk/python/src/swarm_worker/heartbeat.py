"""The heartbeat (docs/worker-protocol.md W25): while its jobs are healthy the
worker renews a Lease of its own, ``<pod>.heartbeat``, every third of the
lease. A renewal that succeeded proves, until the renew deadline counted on
the monotonic clock from when it was sent, that the worker could reach the API
server and was not paused; past it the worker is stale and fences itself
(failover.py). A timer armed at the deadline notices staleness with no request
in flight, and the worker judges again before each apply, so a process
resumed after SIGSTOP learns it first (W28)."""
from __future__ import annotations

import copy
import datetime
import threading
import time
from typing import Any, Callable, Dict, Optional
from urllib.parse import quote

from .fence import FAILOVER_PROTOCOL, HEARTBEAT_LABEL, FailoverSettings, heartbeat_lease_name, timings
from .kube import ApiError
from .lease import PROTOCOL_ANNOTATION

LOOK_AGAIN_SECONDS = 5.0  # without failover.yml, how often it is looked for again


def micro_time(at: datetime.datetime) -> str:
    """Kubernetes MicroTime: RFC 3339 in UTC with exactly six fractional digits."""
    return at.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def heartbeat_lease(pod: str, pod_uid: str, namespace: str, pool: str, lease_seconds: int, at: datetime.datetime, current: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The heartbeat Lease after a renewal at ``at``; fields it does not own are kept."""
    lease = copy.deepcopy(current) if current else {}
    lease["apiVersion"], lease["kind"] = "coordination.k8s.io/v1", "Lease"
    meta = lease.setdefault("metadata", {})
    meta["name"], meta["namespace"] = heartbeat_lease_name(pod), namespace
    meta["labels"] = dict(meta.get("labels") or {}, **{HEARTBEAT_LABEL: pool})
    meta["annotations"] = dict(meta.get("annotations") or {}, **{PROTOCOL_ANNOTATION: FAILOVER_PROTOCOL})
    spec = dict(lease.get("spec") or {})
    if spec.get("holderIdentity") != pod_uid:
        spec["acquireTime"] = micro_time(at)
    spec.update(holderIdentity=pod_uid, leaseDurationSeconds=lease_seconds, renewTime=micro_time(at))
    lease["spec"] = spec
    return lease


class KubeHeartbeatApi:
    """The heartbeat's calls over a Kube: each write returns the Lease as stored (its resourceVersion guards the next)."""

    def __init__(self, kube):
        self.kube = kube

    def _path(self, namespace: str) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{quote(namespace, safe='')}/leases"

    def read(self, namespace: str, name: str, timeout: float):
        return self.kube.get_or_none(f"{self._path(namespace)}/{quote(name, safe='')}", timeout=timeout)

    def create(self, namespace: str, lease: Dict[str, Any], timeout: float):
        return self.kube.request("POST", self._path(namespace), lease, timeout=timeout)

    def replace(self, namespace: str, lease: Dict[str, Any], timeout: float):
        return self.kube.request("PUT", f"{self._path(namespace)}/{quote(lease['metadata']['name'], safe='')}", lease, timeout=timeout)


class Heartbeat:
    def __init__(self, api, pod: str, pod_uid: str, namespace: str, pool: str, load: Callable[[], Optional[FailoverSettings]],
                 healthy: Callable[[], bool], on_stale: Callable[[], None], on_fresh: Callable[[], None], on_error: Callable[[Exception], None],
                 inherit: Optional[Callable[[Optional[Dict[str, Any]], Optional[Dict[str, Any]], datetime.datetime], None]] = None):
        self.api, self.pod, self.pod_uid, self.namespace, self.pool = api, pod, pod_uid, namespace, pool
        self._load, self._healthy, self._on_stale, self._on_fresh, self._on_error = load, healthy, on_stale, on_fresh, on_error
        # Given the pod's acknowledgement and heartbeat Leases (None: absent) as an earlier process left them, read
        # once before the first renewal (which overwrites the heartbeat's renewTime); None: not read.
        self._inherit, self._inherited = inherit, inherit is None
        self._lock = threading.Lock()
        self._current: Optional[Dict[str, Any]] = None
        self._renewed: Optional[float] = None  # monotonic time the last renewal that succeeded was sent
        self._stale = True
        self._deadline: Optional[threading.Timer] = None
        self._kick = threading.Event()
        self._closed = threading.Event()
        self._settings = load()

    def settings(self) -> Optional[FailoverSettings]:
        with self._lock:
            return self._settings

    def _fresh_locked(self) -> bool:
        s = self._settings
        return s is not None and self._renewed is not None and time.monotonic() - self._renewed < timings(s.lease_seconds).renew_deadline

    def fresh(self) -> bool:
        with self._lock:
            return self._fresh_locked()

    def ever_renewed(self) -> bool:
        with self._lock:
            return self._renewed is not None

    def kick(self) -> None:
        self._kick.set()

    def judge(self) -> None:
        """Stale or fresh, told once per change; a timer is armed at the deadline."""
        call = None
        with self._lock:
            if self._settings is None or self._closed.is_set():
                return
            fresh = self._fresh_locked()
            if not fresh and not self._stale:
                self._stale, call = True, self._on_stale
            elif fresh and self._stale:
                self._stale, call = False, self._on_fresh
            if fresh:
                if self._deadline is not None:
                    self._deadline.cancel()
                due = self._renewed + timings(self._settings.lease_seconds).renew_deadline - time.monotonic()
                self._deadline = threading.Timer(max(0.0, due), self.judge)
                self._deadline.daemon = True
                self._deadline.start()
        if call is not None:
            call()

    def _read_inherited(self, timeout: float) -> bool:
        """Reads the pod's Leases for ``inherit``, once (False: not read yet, the renewal waits)."""
        if self._inherited:
            return True
        try:
            ack = self.api.read(self.namespace, self.pod, timeout)
            own = self.api.read(self.namespace, heartbeat_lease_name(self.pod), timeout)
        except ApiError as error:
            self._on_error(error)
            return False
        self._inherit(ack, own, datetime.datetime.now(datetime.timezone.utc))
        with self._lock:
            self._inherited, self._current = True, own
        return True

    def _renew(self, s: FailoverSettings) -> bool:
        timeout = timings(s.lease_seconds).renew_interval
        if not self._read_inherited(timeout):
            return False
        sent_at = time.monotonic()
        with self._lock:
            current = self._current
        body = heartbeat_lease(self.pod, self.pod_uid, self.namespace, self.pool, s.lease_seconds, datetime.datetime.now(datetime.timezone.utc), current)
        try:
            stored = self.api.create(self.namespace, body, timeout) if current is None else self.api.replace(self.namespace, body, timeout)
        except ApiError as error:
            if error.code in (404, 409):
                # A conflict, or a Lease already there (or gone): read it again for the next try.
                try:
                    again = self.api.read(self.namespace, heartbeat_lease_name(self.pod), timeout)
                except ApiError:
                    again = None
                with self._lock:
                    self._current = again
            self._on_error(error)
            return False
        with self._lock:
            self._current = stored
            self._renewed = sent_at if self._renewed is None else max(self._renewed, sent_at)
        return True

    def run(self) -> None:
        """Beats until closed: with settings, renews while healthy every L/3 (a failure is retried soon)."""
        while not self._closed.is_set():
            self.judge()  # first: a resumed process learns it is stale before anything else
            s = self._load()
            with self._lock:
                self._settings = s
            wait = LOOK_AGAIN_SECONDS
            if s is not None:
                healthy = False
                try:
                    healthy = self._healthy()
                except Exception:  # noqa: BLE001 - an unhealthy check
                    pass
                ok = healthy and self._renew(s)
                self.judge()
                wait = timings(s.lease_seconds).renew_interval if ok else timings(s.lease_seconds).retry
            self._kick.wait(wait)
            self._kick.clear()

    def close(self) -> None:
        self._closed.set()
        self._kick.set()
        with self._lock:
            if self._deadline is not None:
                self._deadline.cancel()
