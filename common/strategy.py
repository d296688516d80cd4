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
    warm-starts the next fit. It is pickled with the strategy, so a copy continues identically,
    and it travels as text (:meth:`warm_text`, :meth:`adopt_warm`), so that a new worker of the
    same study starts from the fits of the others (:mod:`common.warm_store`).
    """

    def __init__(self, busy: BusyPolicy = BusyPolicy()) -> None:
        self.busy = busy
        self._warm: dict[Any, Any] = {}
        self._adopted: dict[str, Any] = {}  # fits read from the study, by key digest
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
        """The last fit under ``key``: this strategy's own, else one adopted from the study."""
        with self._warm_lock:
            if key in self._warm:
                return self._warm[key]
            if not self._adopted:
                return None
            from common.warm_store import key_digest

            return self._adopted.get(key_digest(key))

    @property
    def has_warm_start(self) -> bool:
        """Whether any fit is known (its own or adopted): a new worker has none."""
        with self._warm_lock:
            return bool(self._warm or self._adopted)

    def warm_text(self) -> str:
        """The fits a next suggestion would start from, as text for the study: those of
        :meth:`remember`, and adopted ones not refitted since (:func:`common.warm_store.dumps`)."""
        from common.warm_store import dumps, key_digest

        with self._warm_lock:
            own = {key_digest(key): params for key, params in self._warm.items()}
            return dumps({**self._adopted, **own})

    def adopt_warm(self, text: str) -> None:
        """Warm-start from fits another worker stored (:meth:`warm_text`); this strategy's own
        fits, once it has any, take precedence."""
        from common.warm_store import loads

        fits = loads(text)
        with self._warm_lock:
            self._adopted = fits

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
        self.__dict__.setdefault("_adopted", {})  # a checkpoint from before adopted fits
        self._warm_lock = threading.Lock()


REFIT_GROWTH = 100  # past this many observations, hyper-parameters are refitted per 1% of growth
COLD_SUBSET = 2 * REFIT_GROWTH  # a fit with nothing to start from sees at most this many points


def cold_subset(n_observations: int) -> np.ndarray:
    """Indices of the observations a fit from the priors uses in a long study: evenly spaced
    over the whole history (a function of its length only, so every worker picks the same)."""
    if n_observations <= COLD_SUBSET:
        return np.arange(n_observations)
    return np.unique(np.linspace(0, n_observations - 1, COLD_SUBSET).round().astype(int))


def refit_due(n_observations: int, every: int = 1) -> bool:
    """Whether a history of ``n_observations`` refits the GP's hyper-parameters (MAP), rather
    than conditioning the last fit's hyper-parameters on all the data.

    Every ``every``-th length, and past ``REFIT_GROWTH * every`` observations once per 1% of
    growth: one observation moves the MAP hyper-parameters of n by O(1/n), while a fit costs
    O(n³) per iteration (about 20 s at 1000 observations on one thread). A function of the
    length alone, so every worker, copy and restored searcher agrees on it; up to
    ``2 * REFIT_GROWTH - 1`` observations it is exactly ``every``.
    """
    step = max(every, n_observations // REFIT_GROWTH)
    return n_observations % step == 0


def refit_or_reuse(
    strategy: Strategy,
    key: Any,
    n_observations: int,
    condition: Callable,
    fit: Callable,
    every: int = 1,
    fit_subset: Callable | None = None,
):
    """The model under ``key``: ``fit(last_params)`` (returning the model and its parameters,
    remembered for the next warm start) where :func:`refit_due` says so or no earlier fit is
    known, else ``condition(last_params)``: the model with the earlier fit's hyper-parameters,
    conditioned on all data (``None`` where those parameters do not fit the model).

    With no earlier fit in a study longer than :data:`COLD_SUBSET` (the first worker of a long
    study, nothing stored with it), ``fit_subset(rows)`` fits the :func:`cold_subset` rows only
    and the model conditions those hyper-parameters on all data: a MAP estimate from a uniform
    subsample, refined by the next refit :func:`refit_due` asks for (within 1% more trials),
    instead of a fit from the priors that costs O(n³) per iteration (about 40 s at 1000 points).
    """
    params = strategy.warm_start(key)
    if params is not None and not refit_due(n_observations, every):
        model = condition(params)
        if model is not None:
            return model
    if params is None and fit_subset is not None and n_observations > COLD_SUBSET:
        _, params = fit_subset(cold_subset(n_observations))
        model = condition(params)
        if model is not None:
            strategy.remember(key, params)
            return model
    model, params = fit(params)
    strategy.remember(key, params)
    return model


def loaded(model, params):
    """``model`` with ``params`` loaded, in eval mode (``None`` if they do not fit it)."""
    from common.gp import load_parameters

    if not load_parameters(model, params):
        return None
    model.eval()
    return model


def fit_or_condition(
    strategy: Strategy,
    key: Any,
    X: np.ndarray,
    values: np.ndarray,
    make_kernel: Callable,
    every: int = 1,
    warm_maxiter: int | None = None,
    constraint: bool = False,
    warping: str = "copula",
):
    """:func:`refit_or_reuse` for a GP of :func:`common.gp.fit_gp` (at most ``warm_maxiter``
    iterations from a warm start; :data:`common.gp.FIT_MAXITER` if ``None``; targets warped by
    ``warping``); a ``constraint``'s model has its own targets and noise."""
    from common.gp import FIT_MAXITER, build_gp, fit_gp

    def condition(params):
        return loaded(build_gp(X, values, make_kernel, constraint, warping), params)

    return refit_or_reuse(
        strategy,
        key,
        len(values),
        condition,
        lambda params: fit_gp(
            X, values, make_kernel, params, warm_maxiter or FIT_MAXITER, constraint, warping
        ),
        every,
        lambda rows: fit_gp(
            X[rows], values[rows], make_kernel, None, FIT_MAXITER, constraint, warping
        ),
    )


def constraint_fitter(
    strategy: Strategy, key: Any, X: np.ndarray, make_kernel: Callable, warm_maxiter=None
) -> Callable:
    """``fit(k, rows, values)`` for :func:`common.constraints.feasibility`: the method's GP on
    constraint ``k``'s values at ``X[rows]``, warm-started per constraint, refitted as
    :func:`refit_due` says."""

    def fit(k: int, rows: np.ndarray, values: np.ndarray):
        return fit_or_condition(
            strategy,
            (key, "constraint", k),
            X[rows],
            values,
            make_kernel,
            warm_maxiter=warm_maxiter,
            constraint=True,
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
