"""The interface every method implements, its options, and what the methods share: encoding the
history's pending points, warm-started GP fits."""

from __future__ import annotations

import numbers
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from common.busy import BusyPolicy
from common.history import History
from common.space import MixedSpace


class MethodOptions(ABC):
    """A method's options: a frozen dataclass, validated when built, that makes the strategy.

    Subclasses (``CoCaBOOptions``, ``CasmopolitanOptions``, ``BOFMOptions``) live beside their
    method and import nothing heavy, so an adapter checks the user's options at construction
    while torch loads only with the first suggestion.
    """

    @abstractmethod
    def make(self, busy: BusyPolicy) -> Strategy:
        """The method's strategy with these options and busy-point policy."""


class Strategy(ABC):
    """A BO method: ``suggest(space, history, n, rng)`` returns ``n`` configurations to try next.

    ``busy`` (a :class:`common.busy.BusyPolicy`) says how busy points (pending configurations and a
    batch's earlier picks) count; see :func:`common.penalization.acquisition_with_busy_points`.

    Any state a method needs (bandit weights, trust regions) is recomputed from the ordered
    ``history``; the only thing kept between calls is a small cache of GP hyper-parameters that
    warm-starts the next fit (it is pickled with the strategy, so a copy continues identically).
    """

    def __init__(self, busy: BusyPolicy = BusyPolicy()) -> None:
        self.busy = busy
        self._warm: dict[Any, Any] = {}
        self._warm_lock = threading.Lock()

    @abstractmethod
    def suggest(
        self, space: MixedSpace, history: History, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        """``n`` new configurations of ``space`` given ``history`` (values to minimise)."""

    def busy_acquisition(
        self,
        make_base: Callable,
        model,
        busy_rows: np.ndarray,
        *args,
        canonical: tuple[Callable, np.ndarray] | None = None,
        feasibility=None,
        **kwargs,
    ):
        """The acquisition to maximise while ``busy_rows`` run, handled as ``self.busy`` says
        (PLAyBOOK by default): :func:`common.penalization.acquisition_with_busy_points`.

        ``canonical`` (a conditional space's ``(active_mask, impute_row)`` in the model's rows)
        makes it see each candidate with its unused parameters imputed, busy-point distances
        included (:class:`common.acquisition.CanonicalInputs`). ``feasibility`` (a constrained
        study's :class:`common.constraints.Feasibility`) replaces the base by log EI over the best
        feasible value and adds the log probability of feasibility.
        """
        from common.acquisition import CanonicalInputs
        from common.penalization import acquisition_with_busy_points

        if feasibility is not None:
            make_base, kwargs["log_base"] = feasibility.base(make_base), True
        acqf = acquisition_with_busy_points(
            make_base, model, busy_rows, *args, policy=self.busy, **kwargs
        )
        if feasibility is not None:
            acqf = feasibility.weigh(acqf)
        return acqf if canonical is None else CanonicalInputs(acqf, *canonical)

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


def constraint_fitter(
    strategy: Strategy, key: Any, X: np.ndarray, make_kernel: Callable, warm_maxiter=None
) -> Callable:
    """``fit(k, rows, values)`` for :func:`common.constraints.feasibility`: the method's GP on
    constraint ``k``'s values at ``X[rows]``, warm-started per constraint."""

    def fit(k: int, rows: np.ndarray, values: np.ndarray):
        return fit_cached(
            strategy, (key, "constraint", k), X[rows], values, make_kernel, warm_maxiter, True
        )

    return fit


def canonical_inputs(space: MixedSpace) -> tuple[Callable, np.ndarray] | None:
    """A conditional space's ``(active_mask, impute_row)`` for :meth:`Strategy.busy_acquisition`
    (``None`` for a space without conditions)."""
    return (space.active_mask, space.impute_row) if space.conditions else None


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
    strategy: Strategy,
    key: Any,
    X: np.ndarray,
    values: np.ndarray,
    make_kernel: Callable,
    warm_maxiter: int | None = None,
    constraint: bool = False,
):
    """Fit a GP warm-started from the strategy's previous fit under ``key`` (at most
    ``warm_maxiter`` iterations from there; :data:`common.gp.FIT_MAXITER` if ``None``);
    a ``constraint``'s model has its own targets and noise (:func:`common.gp.fit_gp`)."""
    from common.gp import FIT_MAXITER, fit_gp

    model, params = fit_gp(
        X,
        values,
        make_kernel,
        strategy.warm_start(key),
        warm_maxiter or FIT_MAXITER,
        constraint,
    )
    strategy.remember(key, params)
    return model


# ---------------------------------------------------------------------- option checks
def check_integer(name: str, value: Any, minimum: int) -> None:
    """Raise a ``ValueError`` naming the option unless ``value`` is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")


def check_number(name: str, value: Any, minimum: float) -> None:
    """Raise a ``ValueError`` naming the option unless ``value`` is a finite number >= minimum."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not np.isfinite(float(value))
        or value < minimum
    ):
        raise ValueError(f"{name} must be a finite number >= {minimum}, got {value!r}.")


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}.")
