"""The interface every method implements, and what they share: encoding the history, warm starts."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from common.history import History
from common.space import MixedSpace


class Strategy(ABC):
    """A BO method: ``suggest(space, history, n, rng)`` returns ``n`` configurations to try next.

    ``pending``, ``penalizer`` and ``lipschitz`` say how busy points (pending configurations and a
    batch's earlier picks) count; see :func:`common.penalization.acquisition_with_busy_points`.

    Any state a method needs (bandit weights, trust regions) is recomputed from the ordered
    ``history``; the only thing kept between calls is a small cache of GP hyper-parameters that
    warm-starts the next fit (it is pickled with the strategy, so a copy continues identically).
    """

    def __init__(
        self, *, pending: str = "playbook", penalizer: str = "hlp", lipschitz: str = "local"
    ) -> None:
        check_pending_options(pending, penalizer, lipschitz)
        self.pending, self.penalizer, self.lipschitz = pending, penalizer, lipschitz
        self._warm: dict[Any, Any] = {}
        self._warm_lock = threading.Lock()

    @abstractmethod
    def suggest(
        self, space: MixedSpace, history: History, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        """``n`` new configurations of ``space`` given ``history`` (values to minimise)."""

    def busy_acquisition(self, make_base: Callable, model, busy_rows: np.ndarray, *args, **kwargs):
        """The acquisition to maximise while ``busy_rows`` run, handled as ``pending`` says
        (PLAyBOOK by default): :func:`common.penalization.acquisition_with_busy_points`."""
        from common.penalization import acquisition_with_busy_points

        return acquisition_with_busy_points(
            make_base,
            model,
            busy_rows,
            *args,
            pending=self.pending,
            penalizer=self.penalizer,
            lipschitz=self.lipschitz,
            **kwargs,
        )

    def warm_start(self, key: Any) -> Any:
        with self._warm_lock:
            return self._warm.get(key)

    def remember(self, key: Any, params: Any) -> None:
        with self._warm_lock:
            self._warm.pop(key, None)
            self._warm[key] = params
            while len(self._warm) > 8:  # a few spaces at most (dynamic search spaces)
                self._warm.pop(next(iter(self._warm)))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()  # the warm starts travel too: a copy continues identically
        del state["_warm_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._warm_lock = threading.Lock()


def random_configs(space: MixedSpace, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    return space.decode(space.sample(n, rng))


def encode_pending(space: MixedSpace, history: History) -> np.ndarray:
    """The pending configurations encoded (``(p, dim)``); one outside ``space`` is skipped."""
    rows = []
    for config in history.pending:
        try:
            rows.append(space.encode([config])[0])
        except (KeyError, ValueError, TypeError):
            continue
    return np.asarray(rows, dtype=float).reshape(-1, space.dim)


def fit_cached(
    strategy: Strategy, key: Any, X: np.ndarray, values: np.ndarray, make_kernel: Callable
):
    """Fit a GP warm-started from the strategy's previous fit under ``key``."""
    from common.gp import fit_gp

    model, params = fit_gp(X, values, make_kernel, strategy.warm_start(key))
    strategy.remember(key, params)
    return model


def _key(space: MixedSpace, config: Any) -> bytes:
    return space.round(space.encode([config])).tobytes()


def propose(
    strategy: Strategy, space: MixedSpace, history: History, n: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """``strategy.suggest`` without repeats: a suggestion equal to an evaluated, pending or
    already-proposed configuration is replaced by a random one (re-evaluating a point wastes a
    trial, and a repeat of a busy point duplicates a worker's job)."""
    configs = strategy.suggest(space, history, n, rng)
    seen = {_key(space, c) for c in (*history.configs, *history.pending)}
    out = []
    for config in configs:
        for _ in range(20):
            if _key(space, config) not in seen:
                break
            config = random_configs(space, 1, rng)[0]
        seen.add(_key(space, config))
        out.append(config)
    return out


PENDING_METHODS = ("playbook", "kriging_believer", "ignore")


def check_pending_options(pending: str, penalizer: str, lipschitz: str) -> None:
    """Validate the user's choice of batch handling early, with a message that lists the options."""
    if pending not in PENDING_METHODS:
        raise ValueError(f"pending must be one of {PENDING_METHODS}, got {pending!r}.")
    if penalizer not in ("hlp", "lp"):
        raise ValueError(f"penalizer must be 'hlp' (hard local) or 'lp', got {penalizer!r}.")
    if lipschitz not in ("local", "global"):
        raise ValueError(f"lipschitz must be 'local' or 'global', got {lipschitz!r}.")
