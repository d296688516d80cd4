"""Simulated asynchronous workers: k workers, random trial runtimes, no real waiting.

The asynchronous set-up of the PLAyBOOK benchmark (Alvi et al., "Asynchronous batch Bayesian
optimisation with improved local penalisation", 2019): ``k`` workers each evaluate one configuration
at a time; a trial's runtime is drawn from a half-normal distribution with mean 1; as soon as a
worker finishes, its result is reported and that worker asks for the next configuration while the
other ``k - 1`` are still busy. Time is simulated with an event queue, so a run costs only the time
of the suggestions and evaluations themselves. ``k = 1`` is the ordinary sequential loop.

The simulator knows nothing about Optuna: it calls ``ask(i)`` when a worker starts trial ``i`` and
``tell(handle)`` when that trial finishes, and returns the ordered list of events. Example::

    events = simulate(ask, tell, n_trials=20, n_workers=4, runtimes=half_normal_runtimes(seed=0))
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import numpy as np

T = TypeVar("T")

#: Scale of the half-normal distribution whose mean is 1 (mean = scale * sqrt(2 / pi)).
HALF_NORMAL_SCALE = math.sqrt(math.pi / 2.0)


def half_normal_runtimes(seed: int, mean: float = 1.0, batch: int = 256) -> Iterator[float]:
    """Endless stream of half-normal runtimes with the given mean, from its own seeded generator.

    The stream depends only on ``seed``, so every sampler run with the same seed sees the same
    runtimes in the same order (common random numbers).
    """
    rng = np.random.default_rng([0x5EED, int(seed)])
    scale = mean * HALF_NORMAL_SCALE
    while True:
        yield from (float(x) for x in np.abs(rng.normal(0.0, scale, size=batch)))


@dataclass(frozen=True)
class Event:
    """One simulated event: trial ``trial`` (0-based ask order) started or finished at ``time``."""

    time: float
    kind: Literal["start", "finish"]
    trial: int
    running: int  # trials in progress right after the event


@dataclass
class _Running(Generic[T]):
    trial: int
    start: float
    handle: T


def simulate(
    ask: Callable[[int], T],
    tell: Callable[[T], None],
    n_trials: int,
    n_workers: int,
    runtimes: Iterable[float],
) -> list[Event]:
    """Run ``n_trials`` trials on ``n_workers`` simulated workers; return the events in time order.

    At time 0 the workers ask one after the other (each ask sees the earlier ones still running).
    Then, repeatedly, the running trial with the earliest finish time is told (ties: the earlier
    trial first) and, while trials remain, its worker asks for a new one at that same time. So
    exactly ``min(n_workers, trials not yet asked + running)`` trials run between events, and every
    trial is told before the function returns. Runtimes are taken from ``runtimes`` in ask order.
    """
    if n_workers < 1:
        raise ValueError(f"n_workers must be at least 1, got {n_workers}.")
    if n_trials < 0:
        raise ValueError(f"n_trials must not be negative, got {n_trials}.")
    durations = iter(runtimes)
    queue: list[tuple[float, int, _Running[T]]] = []
    events: list[Event] = []
    asked = 0

    def start(now: float) -> None:
        nonlocal asked
        trial = asked
        handle = ask(trial)
        asked += 1
        duration = float(next(durations))
        if not duration >= 0.0:
            raise ValueError(f"runtimes must be non-negative numbers, got {duration}.")
        heapq.heappush(queue, (now + duration, trial, _Running(trial, now, handle)))
        events.append(Event(now, "start", trial, len(queue)))

    while asked < min(n_workers, n_trials):
        start(0.0)
    while queue:
        now, trial, running = heapq.heappop(queue)
        tell(running.handle)
        events.append(Event(now, "finish", trial, len(queue)))
        if asked < n_trials:
            start(now)
    return events


def run_timed(
    ask: Callable[[int], T], tell: Callable[[T], None], n_trials: int, n_workers: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`simulate` with :func:`half_normal_runtimes` of ``seed``: each trial's start and end
    time (NaN for a trial that never started or ended)."""
    start = np.full(n_trials, np.nan)
    end = np.full(n_trials, np.nan)
    for event in simulate(ask, tell, n_trials, n_workers, half_normal_runtimes(seed)):
        (start if event.kind == "start" else end)[event.trial] = event.time
    return start, end
