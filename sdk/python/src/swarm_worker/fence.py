"""Protocol 2's settings and fencing rules (docs/worker-protocol.md 8, W26,
W27), pure so they are tested without clocks; failover.py acts on them. The
names and arithmetic follow lib/workerconfig/failover.ts.

Under BreakBeforeMake a stale worker stops every job before its pod can turn
NotReady, and stays fenced until its heartbeat is fresh again and, if it
stopped any job, it has read a config newer than the one it fenced at (Swarm
writes one when it hands the jobs over). Under MakeBeforeBreak it keeps its
jobs (a duplicate is allowed there, a gap is not) and only reports itself not
ready."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

FAILOVER_KEY = "failover.yml"
HEARTBEAT_LABEL = "k8slab.info/heartbeat"  # not the Swarm label: the event source never delivers a renewal
FAILOVER_PROTOCOL = "2"
BREAK_BEFORE_MAKE, MAKE_BEFORE_BREAK = "BreakBeforeMake", "MakeBeforeBreak"


@dataclass(frozen=True)
class FailoverSettings:
    lease_seconds: int  # L: the heartbeat Lease's duration
    handoff: str


def heartbeat_lease_name(pod: str) -> str:
    return f"{pod}.heartbeat"


def parse_failover(text: str) -> FailoverSettings:
    """Exactly the two fields Swarm writes; anything else is refused as a whole (ValueError)."""
    fields = {}
    for raw in text.split("\n"):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z]+):\s*(\S+)", line)
        if not match or match.group(1) in fields:
            raise ValueError(f"{FAILOVER_KEY}: cannot read line {raw!r}")
        fields[match.group(1)] = match.group(2)
    lease = fields.get("leaseSeconds", "")
    if not re.fullmatch(r"[0-9]+", lease) or not 3 <= int(lease) <= 300:
        raise ValueError(f"{FAILOVER_KEY}: leaseSeconds must be an integer from 3 to 300")
    if fields.get("handoff") not in (BREAK_BEFORE_MAKE, MAKE_BEFORE_BREAK):
        raise ValueError(f"{FAILOVER_KEY}: handoff must be MakeBeforeBreak or BreakBeforeMake")
    if len(fields) != 2:
        raise ValueError(f"{FAILOVER_KEY}: unknown field (expected leaseSeconds and handoff)")
    return FailoverSettings(int(lease), fields["handoff"])


@dataclass(frozen=True)
class Timings:
    lease: float
    renew_interval: float  # renew every third of the lease
    retry: float  # a failed renewal is tried again this soon
    renew_deadline: float  # two thirds: past it since the last renewal that succeeded was sent, fence


def timings(lease_seconds: int) -> Timings:
    lease = float(lease_seconds)
    return Timings(lease, lease / 3, min(1.0, lease / 15), lease * 2 / 3)


def breaks_first(settings: Optional[FailoverSettings]) -> bool:
    return settings is not None and settings.handoff == BREAK_BEFORE_MAKE


@dataclass(frozen=True)
class Fence:
    fenced: bool = False
    at_version: int = -1  # the config version in force when it fenced; -1: none read
    stopped_jobs: bool = False


UNFENCED = Fence()
STARTING = Fence(fenced=True)  # under BreakBeforeMake nothing runs before the first renewal


def fence_at(fence: Fence, version: int, running: int) -> Fence:
    at = fence.at_version if fence.fenced and fence.at_version >= 0 else version
    return Fence(True, at, fence.stopped_jobs or running > 0)


UNREADABLE = object()


def may_resume(fence: Fence, fresh: bool, version) -> bool:
    """``version``: the config's version, None (no file) or UNREADABLE."""
    if not fence.fenced:
        return True
    if not fresh or version is UNREADABLE:
        return False
    if not fence.stopped_jobs or version is None:
        return True
    return fence.at_version < 0 or version > fence.at_version


def readiness(settings: Optional[FailoverSettings], fresh: bool, healthy: bool, fence: Fence, fencing: bool, loaded: bool, stopping: bool) -> Tuple[bool, str]:
    """Not ready while fenced (BreakBeforeMake, once its fencing stops returned) or, under
    MakeBeforeBreak, while stale or unhealthy: the kubelet then marks the pod NotReady."""
    if stopping:
        return False, "stopping"
    if settings is not None:
        if breaks_first(settings):
            if fence.fenced and not fencing:
                return False, "fenced: waiting for a fresh heartbeat" + (" and a newer config" if fence.stopped_jobs else "")
        elif not fresh:
            return False, "heartbeat stale"
        elif not healthy:
            return False, "jobs unhealthy"
    if not loaded:
        return False, "share not read yet"
    return True, ""
