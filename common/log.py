"""Where the core's warnings go: the logger of the framework in use, each cause said once.

The core never picks a logger of its own. An adapter runs each suggestion inside
:func:`reporting_to` with its :class:`Reporter` (Optuna's ``optuna.mixbo`` logger, so
``optuna.logging.set_verbosity`` applies; Ray's ``ray.tune.search.mixbo``), and core code calls
:func:`warn`. A cause already reported by that reporter is logged again at debug level only: a
study hears about a failing fit or an infinite value once, not on every suggestion. Outside any
adapter (the core used directly) every warning goes to the ``mixbo`` logger.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Iterator
from typing import Any


class Reporter:
    """A logger plus the causes it has already warned about (one reporter per sampler/searcher;
    ``once=False`` warns every time)."""

    def __init__(self, logger: logging.Logger, *, once: bool = True) -> None:
        self.logger = logger
        self.once = once
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def warn(self, message: str, *, cause: str | None = None) -> None:
        """Log ``message`` as a warning the first time its ``cause`` (default: the message) is
        seen, at debug level after that."""
        key = message if cause is None else cause
        with self._lock:
            first = not self.once or key not in self._said
            self._said.add(key)
        self.logger.log(logging.WARNING if first else logging.DEBUG, message)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state  # loggers pickle by name

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


_DEFAULT = Reporter(logging.getLogger("mixbo"), once=False)
_current: contextvars.ContextVar[Reporter] = contextvars.ContextVar("mixbo_reporter")


def current_reporter() -> Reporter:
    """The reporter of the suggestion in progress (per thread), or the ``mixbo`` default."""
    return _current.get(_DEFAULT)


@contextlib.contextmanager
def reporting_to(reporter: Reporter) -> Iterator[None]:
    """Send the core's warnings to ``reporter`` for the duration of the block (this thread)."""
    token = _current.set(reporter)
    try:
        yield
    finally:
        _current.reset(token)


def warn(message: str, *, cause: str | None = None) -> None:
    """Warn through the current reporter; ``cause`` names what repeats (default: the message)."""
    current_reporter().warn(message, cause=cause)
