"""The acknowledgement (docs/worker-protocol.md 4): the pod's Lease says which
config version it applied and which jobs run. Written only when that changes,
guarded by resourceVersion; conflicts, throttling, server errors and no answer
are retried with backoff; a refusal (403, 422) is raised."""
from __future__ import annotations

import copy
import datetime
import hashlib
import re
import threading
import time
from typing import Any, Callable, Dict, Iterable, Optional, Protocol
from urllib.parse import quote

from .fence import FENCED_ANNOTATION, FENCED_VALUE
from .kube import ApiError, Kube

SWARM_LABEL = "k8slab.info/swarm"
VERSION_ANNOTATION = "k8slab.info/config-version"
DIGEST_ANNOTATION = "k8slab.info/jobs-digest"
LOADED_AT_ANNOTATION = "k8slab.info/loaded-at"
PROTOCOL_ANNOTATION = "k8slab.info/worker-protocol"
PROTOCOL = "1"


def jobs_digest(jobs: Iterable[str]) -> str:
    """sha256 over each name followed by a newline, names sorted by byte, hex, "sha256:"."""
    h = hashlib.sha256()
    for job in sorted(jobs, key=lambda j: j.encode("utf-8")):
        h.update(job.encode("utf-8") + b"\n")
    return "sha256:" + h.hexdigest()


def pool_of(pod: str, given: Optional[str] = None) -> Optional[str]:
    """The pool's name: given, else a StatefulSet pod's name less its ordinal."""
    if given:
        return given
    match = re.fullmatch(r"(.+)-(0|[1-9][0-9]*)", pod)
    return match.group(1) if match else None


class LeaseApi(Protocol):
    def read(self, namespace: str, name: str) -> Optional[Dict[str, Any]]: ...
    def create(self, namespace: str, lease: Dict[str, Any]) -> None: ...
    def replace(self, namespace: str, lease: Dict[str, Any]) -> None: ...


class KubeLeases:
    def __init__(self, kube: Kube):
        self.kube = kube

    @staticmethod
    def _path(namespace: str) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{quote(namespace, safe='')}/leases"

    def read(self, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        return self.kube.get_or_none(f"{self._path(namespace)}/{quote(name, safe='')}")

    def create(self, namespace: str, lease: Dict[str, Any]) -> None:
        self.kube.request("POST", self._path(namespace), lease)

    def replace(self, namespace: str, lease: Dict[str, Any]) -> None:
        self.kube.request("PUT", f"{self._path(namespace)}/{quote(lease['metadata']['name'], safe='')}", lease)


def lease_for(pod: str, pod_uid: str, namespace: str, pool: str, version: int, jobs: Iterable[str], loaded_at: str, current: Optional[Dict[str, Any]], protocol: str = PROTOCOL, fenced: bool = False) -> Dict[str, Any]:
    """The Lease after acknowledging, from ``current`` (None: none yet); fields it does not own are kept. ``fenced``:
    it carries the fenced annotation (waiting for an empty share), dropped otherwise."""
    lease = copy.deepcopy(current) if current else {}
    lease["apiVersion"], lease["kind"] = "coordination.k8s.io/v1", "Lease"
    meta = lease.setdefault("metadata", {})
    meta["name"], meta["namespace"] = pod, namespace
    meta.setdefault("labels", {})
    meta["labels"] = dict(meta["labels"] or {}, **{SWARM_LABEL: pool})
    annotations = dict(meta.get("annotations") or {})
    annotations.update({VERSION_ANNOTATION: str(version), DIGEST_ANNOTATION: jobs_digest(jobs), LOADED_AT_ANNOTATION: loaded_at, PROTOCOL_ANNOTATION: protocol})
    if fenced:
        annotations[FENCED_ANNOTATION] = FENCED_VALUE
    else:
        annotations.pop(FENCED_ANNOTATION, None)
    meta["annotations"] = annotations
    spec = dict(lease.get("spec") or {})
    spec["holderIdentity"] = pod_uid
    lease["spec"] = spec
    return lease


def already_says(lease: Optional[Dict[str, Any]], pod_uid: str, version: int, jobs: Iterable[str], protocol: str = PROTOCOL, since: Optional[datetime.datetime] = None, fenced: bool = False) -> bool:
    """The Lease says this, written by this process (loaded at or after ``since``, its start). One an earlier run of
    the pod wrote is written again: Swarm voids an acknowledgement loaded before the pod's containers last started."""
    if not lease:
        return False
    a = (lease.get("metadata") or {}).get("annotations") or {}
    if since is not None:
        try:
            loaded = datetime.datetime.fromisoformat(str(a.get(LOADED_AT_ANNOTATION, "")).replace("Z", "+00:00"))
        except ValueError:
            return False
        if loaded < since:
            return False
    return (
        (lease.get("spec") or {}).get("holderIdentity") == pod_uid
        and a.get(VERSION_ANNOTATION) == str(version)
        and a.get(DIGEST_ANNOTATION) == jobs_digest(jobs)
        and a.get(PROTOCOL_ANNOTATION) == protocol
        and (a.get(FENCED_ANNOTATION) == FENCED_VALUE) == fenced
    )


def _transient(code: Optional[int]) -> bool:
    return code is None or code in (409, 429) or code >= 500


class Acknowledger:
    """Writes acknowledgements one at a time; of those queued behind one in flight only the newest is written."""

    def __init__(self, api: LeaseApi, pod: str, pod_uid: str, namespace: str, pool: str, attempts: int = 8, backoff: float = 0.2, now: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.timezone.utc)):
        self.api, self.pod, self.pod_uid, self.namespace, self.pool = api, pod, pod_uid, namespace, pool
        self.attempts, self.backoff, self.now = attempts, backoff, now
        self._since = now()
        self._latest: object = None
        self._latest_lock = threading.Lock()
        self._write_lock = threading.Lock()

    def acknowledge(self, version: int, jobs: Iterable[str], protocol: str = PROTOCOL, fenced: bool = False) -> None:
        jobs = list(jobs)
        mine = object()
        with self._latest_lock:
            self._latest = mine
        with self._write_lock:
            loaded_at = self.now().isoformat().replace("+00:00", "Z")
            attempt = 0
            while True:
                attempt += 1
                with self._latest_lock:
                    if self._latest is not mine:
                        return  # superseded: the newer call writes
                try:
                    current = self.api.read(self.namespace, self.pod)
                    if already_says(current, self.pod_uid, version, jobs, protocol, self._since, fenced):
                        return
                    body = lease_for(self.pod, self.pod_uid, self.namespace, self.pool, version, jobs, loaded_at, current, protocol, fenced)
                    if current is None:
                        self.api.create(self.namespace, body)
                    else:
                        self.api.replace(self.namespace, body)
                    return
                except ApiError as error:
                    if not _transient(error.code) or attempt >= self.attempts:
                        raise
                    time.sleep(min(5.0, self.backoff * 2 ** (attempt - 1)))
