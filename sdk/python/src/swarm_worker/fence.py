"""Protocol 2's settings and fencing rules (docs/worker-protocol.md 8, W26,
W27), pure so they are tested without clocks; failover.py acts on them. The
names and arithmetic follow lib/workerconfig/failover.ts.

Under BreakBeforeMake a stale worker stops every job before its pod can turn
NotReady, and stays fenced until its heartbeat is fresh again and the share
it reads names no job, whether it ran any when it fenced or not. A newer config
is not enough: Swarm may have written it before it saw the pod NotReady,
naming the jobs it then gave to a peer (to this worker too, had it run
nothing). Swarm empties an expired worker's share; what
it gains after that comes by the ordinary hand-off. While it waits it says so
(the fenced annotation on its acknowledgement), and a new process of the same
pod that finds its predecessor went stale or fenced starts that way too. Under
MakeBeforeBreak it keeps its jobs (a duplicate is allowed there, a gap is not)
and only reports itself not ready."""
from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

FAILOVER_KEY = "failover.yml"
HEARTBEAT_LABEL = "k8slab.info/heartbeat"  # not the Swarm label: the event source never delivers a renewal
FAILOVER_PROTOCOL = "2"
# On the acknowledgement: stopped its jobs on a fence, runs none until its share is empty (protocol 2).
FENCED_ANNOTATION, FENCED_VALUE = "k8slab.info/fenced", "true"
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
    at_version: int = -1  # the config version in force when it fenced (logged on resuming); -1: none read
    # Fenced on going stale, having stopped whatever it ran (or a process before it did): it waits for an empty share.
    # Whether it ran anything then does not matter: Swarm may have given it jobs in a config it wrote while the pod
    # was still Ready, then expired it and given them to a peer.
    stopped_jobs: bool = False

    @property
    def says_fenced(self) -> bool:
        """The acknowledgement carries the fenced annotation while it waits for an empty share."""
        return self.fenced and self.stopped_jobs


UNFENCED = Fence()
STARTING = Fence(fenced=True)  # under BreakBeforeMake nothing runs before the first renewal
RESTARTED = Fence(fenced=True, stopped_jobs=True)  # its pod's previous process went stale or fenced: as if it stopped jobs


def fence_at(fence: Fence, version: int) -> Fence:
    """The fence after the heartbeat went stale at config ``version``."""
    at = fence.at_version if fence.fenced and fence.at_version >= 0 else version
    return Fence(True, at, True)


UNREADABLE = object()


def may_resume(fence: Fence, fresh: bool, names) -> bool:
    """``names``: whether the held config's share for this pod names a job, None (no file) or UNREADABLE. One that
    fenced on going stale resumes only on a share naming none, at any version: a newer one may still name the jobs
    Swarm gave a peer meanwhile. A new process's first fence (STARTING) waits for the heartbeat alone."""
    if not fence.fenced:
        return True
    if not fresh or names is UNREADABLE:
        return False
    return not fence.stopped_jobs or not names


def _holder(lease: Optional[Dict[str, Any]]) -> Optional[str]:
    return ((lease or {}).get("spec") or {}).get("holderIdentity")


def starting_fence(pod_uid: str, ack: Optional[Dict[str, Any]], heartbeat: Optional[Dict[str, Any]], now: datetime.datetime, renew_deadline: float) -> Fence:
    """The fence a new process starts under BreakBeforeMake, from its pod's Leases (None: absent) as it reads them
    before its first renewal: RESTARTED when the acknowledgement, held by this pod, says fenced, or the heartbeat, held
    by this pod, was renewed longer than the renew deadline before ``now`` (its predecessor went stale: Swarm may have
    expired the pod). Leases of another pod (uid) say nothing of this one."""
    if _holder(ack) == pod_uid and (((ack or {}).get("metadata") or {}).get("annotations") or {}).get(FENCED_ANNOTATION) == FENCED_VALUE:
        return RESTARTED
    if _holder(heartbeat) == pod_uid:
        try:
            renewed = datetime.datetime.fromisoformat(str(heartbeat["spec"].get("renewTime", "")).replace("Z", "+00:00"))
            return RESTARTED if (now - renewed).total_seconds() >= renew_deadline else STARTING
        except (ValueError, TypeError):  # no renewTime, or not one: the predecessor's state unknown
            return RESTARTED
    return STARTING


def readiness(settings: Optional[FailoverSettings], fresh: bool, healthy: bool, fence: Fence, fencing: bool, loaded: bool, stopping: bool) -> Tuple[bool, str]:
    """Not ready while fenced (BreakBeforeMake, once its fencing stops returned) or, under
    MakeBeforeBreak, while stale or unhealthy: the kubelet then marks the pod NotReady."""
    if stopping:
        return False, "stopping"
    if settings is not None:
        if breaks_first(settings):
            if fence.fenced and not fencing:
                return False, "fenced: waiting for a fresh heartbeat" + (" and an empty share" if fence.stopped_jobs else "")
        elif not fresh:
            return False, "heartbeat stale"
        elif not healthy:
            return False, "jobs unhealthy"
    if not loaded:
        return False, "share not read yet"
    return True, ""
