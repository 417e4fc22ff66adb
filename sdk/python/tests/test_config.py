import pytest

from swarm_worker import ConfigError, jobs_digest, parse_config
from swarm_worker.drain import ENDED, LEAVING, REPLACED, departure_of


def test_reads_shares_and_marks():
    config = parse_config("version: 3\nworkloads:\n  w-0:\n    jobs: [b, a]\n    version: 3\n    releasing: [a]\n    awaiting: [c]\n  w-1:\n    jobs: []\n    version: 1\n")
    assert config.version == 3
    share = config.share_of("w-0")
    assert (share.jobs, share.version, share.awaiting) == (["a", "b"], 3, ["c"])
    assert config.share_of("w-9").jobs == [] and config.share_of("w-9").version == -1


def test_reads_names_as_yaml_1_2_does():
    config = parse_config("version: 1\nworkloads:\n  w-0:\n    version: 1\n    jobs: [on, yes, Off, '0x1f', 12:30, ~x, y]\n")
    assert config.share_of("w-0").jobs == sorted(["on", "yes", "Off", "0x1f", "12:30", "~x", "y"])


@pytest.mark.parametrize(
    "text",
    [
        "version: 2\nworkloads: {w-0: {jobs: [a\n",
        "version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2, colour: blue}\n",
        "version: 2\nworkloads:\n  w-0: {jobs: [a, 123], version: 2}\n",
        "version: 2\nworkloads:\n  w-0: {jobs: [a, a], version: 2}\n",
        "version: -1\nworkloads: {}\n",
        "version: true\nworkloads: {}\n",
        "version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2, releasing: [b]}\n",
        "version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2, awaiting: [a]}\n",
        "version: 2\nworkloads:\n  w-0: {jobs: [a], version: 2, released: [a]}\n",
        "version: 2\nworkloads:\n  w-0: {jobs: [a]}\n",
        "- a list\n",
        "workloads: {}\n",
        "version: 1\nworkloads: {}\nextra: 1\n",
        "version: 1\nversion: 2\nworkloads: {}\n",
    ],
)
def test_rejects_what_is_not_the_protocol(text):
    with pytest.raises(ConfigError):
        parse_config(text)


def test_an_empty_workloads_is_fine():
    assert parse_config("version: 1\nworkloads:\n").workloads == {}


def test_digest_is_the_protocols():
    assert jobs_digest(["b", "a"]) == "sha256:911169ddaaf146aff539f58c26c489af3b892dff0fe283c1c264c65ae5aa59a2"
    assert jobs_digest([]) == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_departure():
    assert departure_of("w", "w-3", 0, 1) == LEAVING
    assert departure_of("w", "w-0", 0, 1) == REPLACED
    assert departure_of("w", "w-5", 5, 2) == REPLACED
    assert departure_of("w", "w-4", 5, 2) == LEAVING
    assert departure_of("w", "w-0", 0, None) == ENDED


def test_already_says_only_what_this_process_wrote():
    """A Lease an earlier run of the pod wrote is written again: Swarm voids an acknowledgement loaded before the
    pod's containers last started (lease.py already_says)."""
    import datetime

    from swarm_worker.lease import already_says, lease_for

    start = datetime.datetime(2026, 11, 22, 0, 1, tzinfo=datetime.timezone.utc)
    earlier = lease_for("w-0", "uid", "ns", "w", 3, ["a"], "2026-11-22T00:00:00Z", None)
    mine = lease_for("w-0", "uid", "ns", "w", 3, ["a"], "2026-11-22T00:01:01.250000Z", None)
    assert not already_says(earlier, "uid", 3, ["a"], since=start)
    assert already_says(mine, "uid", 3, ["a"], since=start)
