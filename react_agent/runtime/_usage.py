"""The usage of agents that run as tools inside a run's tool call, collected for the calling run."""

from __future__ import annotations

import threading
from contextvars import ContextVar
from dataclasses import dataclass, field

from react_agent._types import Usage

__all__ = ["report_subrun_usage", "subrun_usage"]

_NO_USAGE = Usage()


@dataclass
class _Subruns:
    """Usage reported by agents run as tools during one tool call of the calling run."""

    usage: Usage = _NO_USAGE  # frozen: shared until the first report
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, usage: Usage) -> None:
        with self.lock:
            self.usage = self.usage + usage


_SUBRUNS: ContextVar[_Subruns | None] = ContextVar("react_agent_subruns", default=None)


class subrun_usage:
    """Collect the usage of agents that run as tools inside this block (the calling run adds it to its own).

    The collector is a context variable, so it reaches tools run in threads (their context is copied)
    and in tasks, and concurrent runs never share one. (A plain class: once per tool call.)"""

    __slots__ = ("sink", "token")

    def __enter__(self) -> _Subruns:
        self.sink = _Subruns()
        self.token = _SUBRUNS.set(self.sink)
        return self.sink

    def __exit__(self, *exc: object) -> None:
        try:
            _SUBRUNS.reset(self.token)
        except ValueError:  # resumed in another context (a generator driven from elsewhere)
            _SUBRUNS.set(None)


def report_subrun_usage(usage: Usage) -> None:
    """Add ``usage`` (a sub-run's) to the collector of the tool call it runs in, if any."""
    sink = _SUBRUNS.get()
    if sink is not None and usage.total_tokens:
        sink.add(usage)
