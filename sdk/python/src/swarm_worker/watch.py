"""Following config.yml (docs/worker-protocol.md W6, W7): the path is read again
every 0.25 s, never an open file (the kubelet swaps a symlink), and each change
is delivered; under restart policy Restart only the first config read."""
from __future__ import annotations

import logging
import threading
from typing import Callable, List, Optional

POLL_SECONDS = 0.25


def read_text(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def follow(path: str, restart_policy: str, deliver: Callable[[Optional[str]], None], stop: threading.Event, log: logging.Logger) -> None:
    last: Optional[List[Optional[str]]] = None
    while not stop.is_set():
        try:
            text = read_text(path)
        except OSError as error:
            log.warning("reading the config failed: %s", error)
        else:
            if last is None or last[0] != text:
                last = [text]
                deliver(text)
                if restart_policy == "Restart" and text is not None:
                    return  # the first config read is the one this pod runs
        stop.wait(POLL_SECONDS)
