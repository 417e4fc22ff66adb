"""A minimal Kubernetes API client, as the pod (docs/worker-protocol.md 2).

The ServiceAccount's token and CA mounted in the pod, the API server from
KUBERNETES_SERVICE_HOST and _PORT. The token is read again every minute: the
kubelet rotates it.
"""
from __future__ import annotations

import http.client
import json
import os
import ssl
import threading
import time
from typing import Any, Optional

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class ApiError(Exception):
    """A refused or failed request; ``code`` is the HTTP status (None: no answer)."""

    def __init__(self, message: str, code: Optional[int]):
        super().__init__(message)
        self.code = code


def mounted_namespace(service_account_dir: Optional[str] = None) -> Optional[str]:
    try:
        with open(os.path.join(service_account_dir or SERVICE_ACCOUNT_DIR, "namespace"), encoding="utf-8") as f:
            return f.read().strip() or None
    except OSError:
        return None


class Kube:
    def __init__(self, service_account_dir: Optional[str] = None, host: Optional[str] = None, port: Optional[int] = None, timeout: float = 10.0):
        self.dir = service_account_dir or SERVICE_ACCOUNT_DIR
        self.host = host or os.environ.get("KUBERNETES_SERVICE_HOST", "")
        self.port = int(port or os.environ.get("KUBERNETES_SERVICE_PORT", "443"))
        if not self.host:
            raise ApiError("KUBERNETES_SERVICE_HOST is not set", None)
        self.timeout = timeout
        self.context = ssl.create_default_context(cafile=os.path.join(self.dir, "ca.crt"))
        self._lock = threading.Lock()
        self._token = ""
        self._read_at = 0.0
        self._bearer()

    @staticmethod
    def in_cluster(service_account_dir: Optional[str] = None, host: Optional[str] = None, port: Optional[int] = None) -> Optional["Kube"]:
        """A client when the pod's credentials and the API server are there, else None."""
        try:
            return Kube(service_account_dir, host, port)
        except (OSError, ApiError, ssl.SSLError):
            return None

    def _bearer(self) -> str:
        with self._lock:
            if time.monotonic() - self._read_at > 60 or not self._token:
                with open(os.path.join(self.dir, "token"), encoding="utf-8") as f:
                    self._token = f.read().strip()
                self._read_at = time.monotonic()
            return self._token

    def request(self, method: str, path: str, body: Any = None, timeout: Optional[float] = None) -> Any:
        """JSON in, JSON out; raises ApiError on any status but 2xx."""
        payload = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self._bearer()}", "Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        conn = http.client.HTTPSConnection(self.host, self.port, timeout=timeout or self.timeout, context=self.context)
        try:
            conn.request(method, path, body=payload, headers=headers)
            res = conn.getresponse()
            text = res.read()
        except (OSError, http.client.HTTPException) as error:
            raise ApiError(f"{method} {path}: {error}", None) from error
        finally:
            conn.close()
        if 200 <= res.status < 300:
            return json.loads(text) if text else None
        message = text.decode("utf-8", "replace")[:300]
        try:
            message = json.loads(text).get("message", message)
        except ValueError:
            pass
        raise ApiError(f"{method} {path}: {res.status}: {message}", res.status)

    def get_or_none(self, path: str, timeout: Optional[float] = None) -> Any:
        try:
            return self.request("GET", path, timeout=timeout)
        except ApiError as error:
            if error.code == 404:
                return None
            raise
