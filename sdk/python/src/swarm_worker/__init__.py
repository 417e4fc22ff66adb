"""The Swarm worker SDK for Python (docs/worker-protocol.md, protocols 1 and 2)."""
from .config import Config, ConfigError, Share, parse_config
from .fence import FAILOVER_PROTOCOL, FailoverSettings, parse_failover
from .jobs import JobInfo
from .lease import PROTOCOL, jobs_digest
from .worker import Worker

__all__ = ["Config", "ConfigError", "FAILOVER_PROTOCOL", "FailoverSettings", "JobInfo", "PROTOCOL", "Share", "Worker", "jobs_digest", "parse_config", "parse_failover"]
