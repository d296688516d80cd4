"""The interface every method's strategy implements, and what the strategies share: the
acquisition under the busy-point policy, and the warm starts of their GP fits."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from common.acquisition.functions import CanonicalInputs
from common.batch.busy import BusyPolicy
from common.batch.penalization import acquisition_with_busy_points
from common.models.warm_store import dumps, key_digest, loads
from common.space.history import History
from common.space.mixed_space import MixedSpace

# The fits a strategy keeps (and stores with the study), the oldest dropped first: a few search
# spaces' worth (a dynamic space leaves old ones behind). One suggestion may use many: a
# multi-objective study with constraints fits the scalarisation's GP, one per objective and one
# per constraint (4 objectives and 4 constraints: 9), and a cap below that drops, every
# suggestion, the fit the next one needs first, so every fit started from the priors.
WARM_KEYS = 32


class Strategy(ABC):
    """A BO method: ``suggest(space, history, n, rng)`` returns ``n`` configurations to try next.

    ``busy`` (a :class:`common.batch.busy.BusyPolicy`) says how busy points (pending configurations
    and a batch's earlier picks) count; see
    :func:`common.batch.penalization.acquisition_with_busy_points`.

    Any state a method needs (bandit weights, trust regions) is a function of the ordered
    ``history``; what is kept between calls is a small cache of GP hyper-parameters that
    warm-starts the next fit, and shortcuts that give the same results faster (the last model's
    Cholesky factor, :meth:`continue_from_latest`, dropped when pickled). The hyper-parameters
    are pickled with the strategy, so a copy continues identically, and they travel as text
    (:meth:`warm_text`, :meth:`adopt_warm`), so that a new worker of the same study starts from
    the fits of the others (:mod:`common.models.warm_store`).
    """

    def __init__(self, busy: BusyPolicy = BusyPolicy()) -> None:
        self.busy = busy
        self._warm: dict[Any, Any] = {}
        self._adopted: dict[str, Any] = {}  # fits read from the study, by key digest
        self._latest: dict[Any, tuple[Any, list]] = {}  # key -> (params, a factor record)
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
        (PLAyBOOK by default): :func:`common.batch.penalization.acquisition_with_busy_points`.

        ``canonical`` (a conditional space's ``(active_mask, impute_row)`` in the model's rows)
        makes it see each candidate with its unused parameters imputed, busy-point distances
        included (:class:`common.acquisition.functions.CanonicalInputs`). ``feasibility`` (a
        constrained study's :class:`common.acquisition.feasibility.Feasibility`) replaces the base
        by log EI over the best feasible value and adds the log probability of feasibility.
        """
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

            return self._adopted.get(key_digest(key))

    @property
    def has_warm_start(self) -> bool:
        """Whether any fit is known (its own or adopted): a new worker has none."""
        with self._warm_lock:
            return bool(self._warm or self._adopted)

    def warm_text(self) -> str:
        """The fits a next suggestion would start from, as text for the study: those of
        :meth:`remember`, and adopted ones not refitted since
        (:func:`common.models.warm_store.dumps`)."""
        with self._warm_lock:
            own = {key_digest(key): params for key, params in self._warm.items()}
            return dumps({**self._adopted, **own})

    def adopt_warm(self, text: str) -> None:
        """Warm-start from fits another worker stored (:meth:`warm_text`); this strategy's own
        fits, once it has any, take precedence."""
        fits = loads(text)
        with self._warm_lock:
            self._adopted = fits

    def remember(self, key: Any, params: Any) -> None:
        with self._warm_lock:
            self._warm.pop(key, None)
            self._warm[key] = params
            while len(self._warm) > WARM_KEYS:
                self._warm.pop(next(iter(self._warm)))

    def continue_from_latest(self, key: Any, params: Any, model: Any) -> None:
        """Let ``model``, built under ``key`` with the hyper-parameters ``params``, extend the
        factor of the last model built with the same ``params`` under ``key``
        (:meth:`common.models.gp.SharedTrainGP.extends`), and become that last model (its
        factor only is kept, not the model)."""
        record = getattr(model, "factor_record", None)
        if record is None:
            return
        with self._warm_lock:
            latest = self._latest.get(key)
            if latest is not None and latest[0] is params:
                model.extends(latest[1])
            self._latest[key] = (params, record())
            while len(self._latest) > WARM_KEYS:  # as many as warm starts
                self._latest.pop(next(iter(self._latest)))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()  # the warm starts travel too: a copy continues identically
        del state["_warm_lock"]
        state["_latest"] = {}  # models are a cache: a copy factors its next model anew
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_adopted", {})  # a checkpoint from before adopted fits
        self.__dict__.setdefault("_latest", {})
        self._warm_lock = threading.Lock()


def canonical_inputs(space: MixedSpace) -> tuple[Callable, np.ndarray] | None:
    """A conditional space's ``(active_mask, impute_row)`` for :meth:`Strategy.busy_acquisition`
    (``None`` for a space without conditions)."""
    return (space.active_mask, space.impute_row) if space.conditions else None


def random_configs(space: MixedSpace, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    return space.decode(space.sample(n, rng))
