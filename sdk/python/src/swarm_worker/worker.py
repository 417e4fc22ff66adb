"""A Swarm worker (docs/worker-protocol.md, protocols 1 and 2) around two
callbacks: the application says how to start and stop one job; the Worker
follows the mounted config.yml (or reads it once, restart policy Restart),
stops before it starts, acknowledges what runs in the pod's Lease, drains or
hands over on SIGTERM, and judges its own health. With failover (protocol 2:
failover.yml beside config.yml) it also renews a heartbeat and fences itself
when it cannot (heartbeat.py, fence.py, failover.py)."""
from __future__ import annotations

import logging
import os
import signal
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

from .config import ConfigError, Share, parse_config
from .drain import Drainer
from .failover import Failover
from .heartbeat import Heartbeat, KubeHeartbeatApi
from .jobs import Callback, JobInfo, Runner, run_all
from .kube import Kube, mounted_namespace
from .lease import Acknowledger, KubeLeases, LeaseApi, pool_of
from .watch import follow, read_text

class Worker:
    """Runs one pod's share. Each option left None defaults to docs/worker-protocol.md 2's environment."""

    def __init__(
        self,
        start: Callback,
        stop: Callback,
        health: Optional[Callable[[List[str]], bool]] = None,
        *,
        start_deadline: float = 30.0,
        stop_deadline: float = 10.0,
        pod: Optional[str] = None,
        pod_uid: Optional[str] = None,
        namespace: Optional[str] = None,
        pool: Optional[str] = None,
        config_path: Optional[str] = None,
        restart_policy: Optional[str] = None,
        drain_config_map: Optional[str] = None,
        drain_stateful_set: Optional[str] = None,
        service_account_dir: Optional[str] = None,
        leases: Optional[LeaseApi] = None,
        heartbeat_api=None,
        drain_interval: float = 0.5,
        retry_base: float = 1.0,
        log: Optional[logging.Logger] = None,
    ):
        env = os.environ
        self.pod = pod or env.get("POD_NAME") or ""
        if not self.pod:
            raise ValueError("POD_NAME is not set (give it from the downward API: fieldRef metadata.name)")
        self.pod_uid = pod_uid or env.get("POD_UID") or None
        self.namespace = namespace or env.get("POD_NAMESPACE") or mounted_namespace(service_account_dir)
        self.config_path = config_path or env.get("CONFIG_PATH") or "/etc/swarm/config.yml"
        self.restart_policy = restart_policy or env.get("SWARM_RESTART_POLICY") or "None"
        self.drain_config_map = drain_config_map or env.get("DRAIN_CONFIGMAP") or None
        self.drain_stateful_set = drain_stateful_set or env.get("DRAIN_STATEFULSET") or None
        self.stop_deadline, self.drain_interval, self.retry_base = stop_deadline, drain_interval, retry_base
        self.log = log or logging.getLogger("swarm_worker")
        self.kube = Kube.in_cluster(service_account_dir)
        api = leases or (KubeLeases(self.kube) if self.kube else None)
        self.ack: Optional[Acknowledger] = None
        if api and self.pod_uid and self.namespace:
            the_pool = pool_of(self.pod, pool or env.get("SWARM_POOL"))
            if not the_pool:
                raise ValueError(f"cannot tell the pool of pod {self.pod}; set SWARM_POOL")
            self.ack = Acknowledger(api, self.pod, self.pod_uid, self.namespace, the_pool)
        else:
            self.log.info("not in a cluster with POD_UID and a ServiceAccount token: not acknowledging")
        self.runner = Runner(start, stop, health, start_deadline, stop_deadline, self.log)
        self.failover = Failover(self.pod, self.pod_uid, self.config_path, self.log, stop_deadline, self._wake)
        heartbeats = heartbeat_api or (KubeHeartbeatApi(self.kube) if self.kube and leases is None else None)
        if self.ack is not None and heartbeats is not None:
            self.failover.heartbeat = Heartbeat(
                heartbeats, self.pod, self.pod_uid, self.namespace, self.ack.pool, self.failover.load, self.runner.healthy,
                self.failover.on_stale, self.failover.on_fresh, lambda e: self.log.warning("heartbeat renewal failed: %s", e),
                self.failover.inherit,
            )
        self._woken = False

        self._lock = threading.Condition()
        self._pending: Optional[List[Optional[str]]] = None  # [text]: the newest text not yet applied
        self._retry_due: set = set()
        self._failed: Dict[str, int] = {}
        self.share = Share()
        self.config_version = -1
        self._stopping = False
        self._loaded = False  # a config was read and applied (or found absent)
        self._acknowledged = ""
        self._terminate = threading.Event()
        self._drain_on_terminate = True
        self._stop_following = threading.Event()

    # -- what the application may ask -------------------------------------------------
    def healthy(self) -> bool:
        """W24: no callback overrun, and the application's check passing."""
        return self.runner.healthy()

    def ready(self) -> Tuple[bool, str]:
        """W26: not ready before the share was read, while fenced, or (MakeBeforeBreak) stale or unhealthy; and why."""
        with self._lock:
            loaded, stopping = self._loaded, self._stopping
        return self.failover.ready(loaded, stopping, self.runner.healthy())

    def may_act(self) -> bool:
        """JobInfo.may_act for code outside a callback (W29)."""
        return self.failover.may_act()

    def _info(self, share_version: int, config_version: int) -> JobInfo:
        return JobInfo(share_version, config_version, self.failover.may_act)

    def _wake(self) -> None:
        with self._lock:
            self._woken = True
            self._lock.notify_all()

    def terminate(self, drain: bool = True) -> None:
        """What SIGTERM (drain, then stop) or SIGINT (drain=False: stop at once) does."""
        self._drain_on_terminate = self._drain_on_terminate and drain
        self._terminate.set()

    # -- applying configs ---------------------------------------------------------------
    def _deliver(self, text: Optional[str]) -> None:
        with self._lock:
            self._pending = [text]
            self._lock.notify_all()

    def _apply(self, text: Optional[str]) -> None:
        if text is None:
            share, version = Share(), -1
        else:
            try:
                config = parse_config(text)
            except ConfigError as error:
                self.log.warning("config rejected, keeping the current share: %s", error)
                return
            share, version = config.share_of(self.pod), config.version
        before = self.share
        lost = [j for j in before.jobs if j not in set(share.jobs)]
        gained = [j for j in share.jobs if j not in set(before.jobs)]
        stop_info = self._info(before.version, version)
        to_stop = []
        with self._lock:
            for job in lost:
                if self._failed.pop(job, None) is None:
                    to_stop.append(job)
        for t in run_all(lambda job: self.runner.stop(job, stop_info), to_stop):
            t.join()
        if self._stopping:
            return
        with self._lock:
            self.share, self.config_version, self._loaded = share, version, True
        start_info = self._info(share.version, version)
        for t in run_all(lambda job: self._start_job(job, start_info), gained):
            t.join()
        self._acknowledge()

    def _start_job(self, job: str, info: JobInfo) -> None:
        if self.runner.start(job, info):
            with self._lock:
                self._failed.pop(job, None)
            return
        with self._lock:
            attempts = self._failed[job] = self._failed.get(job, 0) + 1
        timer = threading.Timer(min(30.0, self.retry_base * 2 ** (attempts - 1)), self._retry_due_now, args=(job,))
        timer.daemon = True
        timer.start()

    def _retry_due_now(self, job: str) -> None:
        with self._lock:
            self._retry_due.add(job)
            self._lock.notify_all()

    def _retry(self) -> None:
        with self._lock:
            due = [j for j in self._retry_due if j in self._failed and j in self.share.jobs and not self._stopping and self.failover.may_start()]
            self._retry_due.clear()
            info = self._info(self.share.version, self.config_version)
        if not due:
            return
        for t in run_all(lambda job: self._start_job(job, info), due):
            t.join()
        self._acknowledge()

    def _acknowledge(self) -> None:
        if self.ack is None:
            return
        protocol = self.failover.protocol()
        fenced, held_at = self.failover.says_fenced()
        with self._lock:
            version = self.config_version
            if version < 0 and fenced:
                version = held_at  # a new process that starts fenced says so at the version it holds back
            if version < 0 or self._stopping:
                return
            jobs = [j for j in self.share.jobs if self.runner.is_running(j)]
            said = f"{version}:{protocol}:{','.join(jobs)}:{fenced}"
            if said == self._acknowledged:
                return
            self._acknowledged = said

        def write() -> None:
            try:
                self.ack.acknowledge(version, jobs, protocol, fenced)
                self.log.info("acknowledged version %s (%d jobs)", version, len(jobs))
            except Exception as error:  # noqa: BLE001 - a refusal (W15): keep running, log
                with self._lock:
                    if self._acknowledged == said:
                        self._acknowledged = ""
                self.log.warning("acknowledgement of version %s failed: %s", version, error)

        threading.Thread(target=write, daemon=True).start()

    def _apply_loop(self) -> None:
        while True:
            with self._lock:
                while self._pending is None and not self._retry_due and not self._stopping and not self._woken:
                    self._lock.wait()
                self._woken = False
                if self._stopping:
                    return
            self.failover.judge()  # first: a process resumed after a pause learns it is stale before it acts (W28)
            if self.failover.take_fence_due():
                self._fence()
            fresh, held, reread = self.failover.take_fresh()
            if reread:
                try:
                    held = [read_text(self.config_path)]
                except OSError as error:
                    self.log.warning("reading the config again failed: %s", error)
            with self._lock:
                if fresh:
                    self._acknowledged = ""  # one that failed while out of reach was given up: write it again
                    if held is not None and self._pending is None:
                        self._pending = held
                pending, self._pending = self._pending, None
            if pending is not None and not self.failover.hold(pending[0]):
                self._apply(pending[0])
            self._retry()
            self._acknowledge()

    def _fence(self) -> None:
        """Stale under BreakBeforeMake: every job stops now, before the pod can turn NotReady, and the share
        is held as none until the fence lifts (W26, failover.py)."""
        with self._lock:
            version = self.config_version
            self._failed.clear()
            self._retry_due.clear()
            info = self._info(self.share.version, version)
        running = self.runner.running()
        self.failover.fenced(version)
        self.log.warning("heartbeat stale: fencing, stopping every job (version %s, %d running)", version, len(running))
        for t in run_all(lambda job: self.runner.stop(job, info), running):
            t.join()
        with self._lock:
            self.share = Share(jobs=[], version=self.share.version)
        self.failover.fence_done()
        self._acknowledge()

    # -- the whole life -----------------------------------------------------------------
    def run(self, handle_signals: bool = True) -> None:
        """Follows the config until SIGTERM or terminate(); drains if configured; stops every job
        (bounded by the stop deadline: the process's exit ends what overruns it); returns."""
        if handle_signals and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda *_: self.terminate(drain=True))
            signal.signal(signal.SIGINT, lambda *_: self.terminate(drain=False))
        self.failover.begin()
        beat = threading.Thread(target=self.failover.heartbeat.run, daemon=True) if self.failover.heartbeat else None
        if beat:
            beat.start()
        applier = threading.Thread(target=self._apply_loop, daemon=True)
        follower = threading.Thread(target=follow, args=(self.config_path, self.restart_policy, self._deliver, self._stop_following, self.log), daemon=True)
        applier.start()
        follower.start()
        while not self._terminate.wait(0.2):
            pass
        if self._drain_on_terminate and self.drain_config_map and self.kube and self.namespace:
            self.log.info("stopping once my jobs are handed over (%s)", self.drain_config_map)
            Drainer(
                self.kube, self.namespace, self.pod, self.drain_config_map, os.path.basename(self.config_path),
                self.drain_stateful_set, self.drain_interval, lambda e: self.log.warning("reading the config to drain failed: %s", e),
            ).wait(threading.Event())
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        self._stop_following.set()
        if self.failover.heartbeat:
            self.failover.heartbeat.close()
        deadline = time.monotonic() + self.stop_deadline

        def stop_running() -> None:
            info = self._info(self.share.version, self.config_version)
            for t in run_all(lambda job: self.runner.stop(job, info), self.runner.running()):
                t.join()

        def stop_everything() -> None:
            stop_running()
            applier.join()  # a start in flight when we began: stop it once it returned
            stop_running()

        stopper = threading.Thread(target=stop_everything, daemon=True)
        stopper.start()
        stopper.join(max(0.0, deadline - time.monotonic()))
        if stopper.is_alive():
            self.log.warning("stops overran their deadline at exit: %s", self.runner.overrun())
