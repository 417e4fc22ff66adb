"""The Swarm worker SDK for Python (docs/worker-protocol.md, protocol 1)."""
from .config import Config, ConfigError, Share, parse_config
from .jobs import JobInfo
from .lease import PROTOCOL, jobs_digest
from .worker import Worker

__all__ = ["Config", "ConfigError", "JobInfo", "PROTOCOL", "Share", "Worker", "jobs_digest", "parse_config"]
