"""Drain and handover on SIGTERM (docs/worker-protocol.md 5.4, W19-W21): keep the
jobs while the ConfigMap, read from the API, still gives this pod some and
someone takes them over; then stop."""
from __future__ import annotations

import re
import threading
from typing import Callable, Optional
from urllib.parse import quote

from .config import holds_jobs
from .kube import ApiError, Kube

HANDOVER_ANNOTATION = "k8slab.info/handover"
HANDOVER_VALUE = "MakeBeforeBreak"

LEAVING, REPLACED, ENDED = "leaving", "replaced", "ended"


def departure_of(stateful_set: str, pod: str, start: int, replicas: Optional[int]) -> str:
    """How a StatefulSet pod leaves; replicas None: the StatefulSet is gone."""
    if replicas is None:
        return ENDED
    match = re.fullmatch(re.escape(stateful_set) + r"-(0|[1-9][0-9]*)", pod)
    if not match or not start <= int(match.group(1)) < start + replicas:
        return LEAVING
    return REPLACED


class Drainer:
    def __init__(self, kube: Kube, namespace: str, pod: str, config_map: str, key: str, stateful_set: Optional[str], interval: float, on_error: Callable[[Exception], None]):
        self.kube, self.namespace, self.pod, self.config_map, self.key = kube, namespace, pod, config_map, key
        self.stateful_set, self.interval, self.on_error = stateful_set, interval, on_error

    def _departure(self) -> str:
        if not self.stateful_set:
            return LEAVING
        sts = self.kube.get_or_none(f"/apis/apps/v1/namespaces/{quote(self.namespace, safe='')}/statefulsets/{quote(self.stateful_set, safe='')}")
        if sts is None:
            return ENDED
        spec = sts.get("spec") or {}
        replicas = spec.get("replicas")
        return departure_of(self.stateful_set, self.pod, (spec.get("ordinals") or {}).get("start", 0), 1 if replicas is None else replicas)

    def _waits(self) -> bool:
        departure = self._departure()
        if departure == ENDED:
            return False
        cm = self.kube.get_or_none(f"/api/v1/namespaces/{quote(self.namespace, safe='')}/configmaps/{quote(self.config_map, safe='')}")
        if cm is None or not holds_jobs((cm.get("data") or {}).get(self.key), self.pod):
            return False
        return departure == LEAVING or ((cm.get("metadata") or {}).get("annotations") or {}).get(HANDOVER_ANNOTATION) == HANDOVER_VALUE

    def wait(self, stop: threading.Event) -> None:
        """Returns once the pod may stop: released, nobody takes over, or its reads are refused (401, 403)."""
        while not stop.is_set():
            try:
                if not self._waits():
                    return
            except ApiError as error:
                self.on_error(error)
                if error.code in (401, 403):
                    return
            stop.wait(self.interval)
