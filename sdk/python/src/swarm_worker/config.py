"""config.yml, read strictly (docs/worker-protocol.md 3.1, W1, W2, W4, W5).

PyYAML reads YAML 1.1 (``on`` a boolean, ``12:30`` a number); Swarm writes
1.2's core schema, so the loader here resolves plain scalars as 1.2 does, and
refuses duplicate keys.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import yaml


class ConfigError(ValueError):
    """A config.yml that is not the protocol's: rejected whole."""


class _Loader(yaml.SafeLoader):
    pass


_Loader.yaml_implicit_resolvers = {}
for _tag, _regexp, _first in [
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("tag:yaml.org,2002:float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+0123456789."),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
]:
    _Loader.add_implicit_resolver(_tag, re.compile(_regexp), list(_first))


def _int_12(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    value = loader.construct_scalar(node)
    return int(value, 16) if value.startswith("0x") else int(value, 10)


def _float_12(loader: yaml.SafeLoader, node: yaml.Node) -> float:
    value = loader.construct_scalar(node).lower()
    return float(value.replace(".inf", "inf").replace(".nan", "nan"))


def _mapping_no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (str, int, float, bool)) and key in seen:
            raise ConfigError(f"{key_node.start_mark.line + 1}:{key_node.start_mark.column + 1}: duplicate key {key!r}")
        if isinstance(key, (str, int, float, bool)):
            seen.add(key)
    return loader.construct_mapping(node, deep=True)


_Loader.add_constructor("tag:yaml.org,2002:int", _int_12)
_Loader.add_constructor("tag:yaml.org,2002:float", _float_12)
_Loader.add_constructor("tag:yaml.org,2002:map", _mapping_no_duplicates)


@dataclass(frozen=True)
class Share:
    """One worker's entry: the jobs it runs and the version it was assigned at (-1: no entry)."""

    jobs: List[str] = field(default_factory=list)
    version: int = -1
    releasing: List[str] = field(default_factory=list)
    awaiting: List[str] = field(default_factory=list)
    released: List[str] = field(default_factory=list)


@dataclass(frozen=True)
class Config:
    version: int
    workloads: Dict[str, Share]

    def share_of(self, pod: str) -> Share:
        share = self.workloads.get(pod)
        if share is None:
            return Share()
        return Share(sorted(share.jobs), share.version, share.releasing, share.awaiting, share.released)


def _non_negative(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: expected a non-negative integer")
    return value


def _jobs(value: object, where: str) -> List[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of job names")
    seen = set()
    for i, job in enumerate(value):
        if not isinstance(job, str) or job == "":
            raise ConfigError(f"{where}[{i}]: expected a non-empty string")
        if job in seen:
            raise ConfigError(f"{where}[{i}]: duplicate job {job!r}")
        seen.add(job)
    return list(value)


SHARE_FIELDS = ("jobs", "version", "releasing", "awaiting", "released")


def parse_config(text: str) -> Config:
    try:
        root = yaml.load(text, Loader=_Loader)  # noqa: S506 - a safe loader with 1.2 resolvers
    except ConfigError:
        raise
    except yaml.YAMLError as error:
        raise ConfigError(f"invalid YAML: {error}".splitlines()[0]) from error
    if not isinstance(root, dict):
        raise ConfigError('(document): expected a mapping with "workloads" and "version"')
    unknown = [k for k in root if k not in ("version", "workloads")]
    if unknown:
        raise ConfigError(f'{unknown[0]}: unknown field (expected "workloads" and "version")')
    if "workloads" not in root:
        raise ConfigError("workloads: missing")
    if "version" not in root:
        raise ConfigError("version: missing")
    version = _non_negative(root["version"], "version")
    workloads_value = root["workloads"]
    if workloads_value is None:
        workloads_value = {}
    if not isinstance(workloads_value, dict):
        raise ConfigError("workloads: expected a mapping of worker name to {jobs, version}")
    workloads: Dict[str, Share] = {}
    for worker, entry in workloads_value.items():
        if not isinstance(worker, str) or worker == "":
            raise ConfigError("workloads: worker names must be non-empty strings")
        where = f"workloads.{worker}"
        if not isinstance(entry, dict):
            raise ConfigError(f'{where}: expected a mapping with "jobs" and "version"')
        for key in entry:
            if key not in SHARE_FIELDS:
                raise ConfigError(f"{where}.{key}: unknown field")
        if "jobs" not in entry:
            raise ConfigError(f"{where}.jobs: missing")
        if "version" not in entry:
            raise ConfigError(f"{where}.version: missing")
        jobs = _jobs(entry["jobs"], f"{where}.jobs")
        marks = {mark: _jobs(entry.get(mark), f"{where}.{mark}") for mark in ("releasing", "awaiting", "released")}
        running = set(jobs)
        if any(j not in running for j in marks["releasing"]):
            raise ConfigError(f"{where}.releasing: a job not in jobs")
        if any(j in running for j in marks["awaiting"]):
            raise ConfigError(f"{where}.awaiting: a job already in jobs")
        if any(j in running for j in marks["released"]):
            raise ConfigError(f"{where}.released: a job still in jobs")
        workloads[worker] = Share(jobs, _non_negative(entry["version"], f"{where}.version"), **marks)
    return Config(version, workloads)


def holds_jobs(text: Optional[str], pod: str) -> bool:
    """The config gives ``pod`` jobs; no config gives none, one that cannot be parsed is taken to."""
    if text is None:
        return False
    try:
        return len(parse_config(text).share_of(pod).jobs) > 0
    except ConfigError:
        return True
