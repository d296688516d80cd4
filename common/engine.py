"""One suggestion engine under both adapters: from a framework's observations to a configuration.

Everything between "these trials exist" and "try this configuration" is decided here, once, for
Optuna and Ray Tune alike:

- the :class:`History` of the framework's :class:`Observations` (values flipped for
  maximisation, failed and NaN results dropped, ±inf clipped to the finite range, with one
  warning per study);
- multi-objective studies: each trial's values per objective (each flipped where maximised), and
  each model suggestion's own random scalarisation of them, ParEGO's
  (:mod:`common.acquisition.scalarization`), which CoCaBO and BO-FM model and CASMOPOLITAN's
  trust region follows (its candidates are scored by the objectives' hypervolume,
  :mod:`common.acquisition.hypervolume`);
- conditional spaces: configurations may lack parameters (the objective asked for them only on
  some branches); which parameters each branch uses is learned from them
  (:mod:`common.space.conditioning`), and the methods model the union;
- pruned trials (stopped early by a pruner or a scheduler) as observations with values imputed
  from their learning curves (:mod:`common.space.pruned`);
- the start-up rule: a uniformly random design until ``n_startup_trials`` trials have been issued
  (completed, pruned or running, other than the one being sampled) and the history holds
  something to learn from (a completed trial, or pruned ones enough to rank; said once when a
  study prunes so much that the model cannot start);
- the call's random generator, a pure function of the seed, the trial's index and the attempt, so
  a suggestion does not depend on how many calls came before it (a pickled copy, a restored
  searcher and another process holding the same study all agree);
- one torch thread on the CPU, and the core's warnings sent to the framework's logger;
- the taken configurations (every observed one, modelled or not, and the running ones), with
  :mod:`common.space.configset`'s one definition of "the same configuration": a suggestion equal
  to a taken one is replaced by a random free one, and only a search space with no free
  configuration left repeats (said once);
- the claims of other workers: a configuration another worker took while this one sampled is
  sampled again, avoiding it (``claim``, up to :data:`MAX_CLAIMS` times);
- the fallback: a strategy that raises gives a random free configuration and one warning per cause;
- the fits a new worker starts from: a strategy without fits of its own adopts the latest ones
  stored with the study (:mod:`common.models.warm_store`);
- the timing of each suggestion.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import numbers
import operator
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from common.acquisition.scalarization import scalarize, single_objective
from common.batch.busy import BusyPolicy
from common.log import Reporter, reporting_to
from common.methods.options import MethodOptions
from common.runtime import single_thread
from common.space.conditioning import conditioned
from common.space.configset import ConfigSet
from common.space.grown import GrownRows, encoding_key
from common.space.history import History
from common.space.mixed_space import MixedSpace
from common.space.pruned import (
    DEFAULT_IMPUTATION,
    can_start,
    check_imputation,
    finite_curve,
    impute,
)

if TYPE_CHECKING:
    from common.methods.strategy import Strategy

RANDOM_DRAWS = 256  # random rows tried for a free configuration before enumerating the space
ENUMERATION_LIMIT = 100_000  # discrete spaces up to this size are enumerated when draws fail
MAX_CLAIMS = 3  # picks per trial while other workers keep taking them


@dataclass(frozen=True)
class Observations:
    """A study's trials as its framework reports them, the input of one suggestion.

    ``configs``: the finished trials' configurations (completed or pruned), each with its raw
    ``values`` entry (a number, or one per objective of a multi-objective study; ``None`` or
    NaN: no value); ``pending``: the running trials' configurations; ``maximize``: the
    direction (one flag per objective when there are several); ``constraints``: each finished
    trial's constraint values (NaN: not reported); ``curves``: each one's reported values by
    step; ``pruned``: which were stopped early, their values imputed from ``curves``
    (:func:`common.space.pruned.impute`). Every configuration here is taken, whether the model
    uses it or not.
    """

    configs: Sequence[Mapping[str, Any]]
    values: Sequence[float | Sequence[float] | None]
    pending: Sequence[Mapping[str, Any]] = ()
    maximize: bool | Sequence[bool] = False
    constraints: Sequence[Sequence[float]] | None = None
    curves: Sequence[Mapping[int, float] | None] | None = None
    pruned: Sequence[bool] | None = None


@dataclass(frozen=True)
class Suggestion:
    """A configuration, where it came from (``"design"``, ``"model"``, ``"random"`` for a
    replaced repeat, ``"fallback"`` after a failure) and the seconds it took; ``fits``, for a
    model suggestion handed to :meth:`SuggestionEngine.suggest`'s ``claim``, the GP fits to
    store with the study for other workers (:meth:`SuggestionEngine.warm_fits`)."""

    config: dict[str, Any]
    source: str
    seconds: float
    fits: str = ""


def check_seed(seed: Any) -> int | None:
    """``seed`` as an int, or a ``ValueError`` that says what a seed must be."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}.")
    return int(seed)


def check_startup(n_startup_trials: Any) -> int:
    if (
        isinstance(n_startup_trials, bool)
        or not isinstance(n_startup_trials, numbers.Integral)
        or n_startup_trials < 0
    ):
        raise ValueError(f"n_startup_trials must be an integer >= 0, got {n_startup_trials!r}.")
    return int(n_startup_trials)


class SuggestionEngine:
    """The shared path from observations to suggestions (see the module docstring).

    ``method`` is a method's validated options (``CoCaBOOptions``, …); its strategy is built on
    the first model suggestion, so constructing an engine imports no numerical stack. ``logger``
    is the framework's; ``name`` (the sampler's or searcher's class name) starts each warning.
    ``slow_suggestion_s`` warns (once) when a suggestion takes longer. ``pruned`` is how pruned
    trials are modelled (:data:`common.space.pruned.IMPUTATIONS`).
    """

    def __init__(
        self,
        method: MethodOptions,
        *,
        name: str,
        logger: logging.Logger,
        seed: int | None = None,
        n_startup_trials: int = 10,
        busy: BusyPolicy = BusyPolicy(),
        slow_suggestion_s: float | None = None,
        pruned: str = DEFAULT_IMPUTATION,
    ) -> None:
        self.method = method
        self.pruned = check_imputation(pruned)
        self.busy = busy
        self.name = name
        self.n_startup_trials = check_startup(n_startup_trials)
        seed = check_seed(seed)
        self._base_seed = seed if seed is not None else _fresh_seed()
        self.slow_suggestion_s = slow_suggestion_s
        self.reporter = Reporter(logger)
        self._strategy: Strategy | None = None
        self._lock = threading.Lock()
        self._observed = GrownRows()  # the observed configurations' rows, for the taken ones
        # the last configurations that needed no conditions, with their space's encoding key
        self._unconditioned: tuple[tuple, tuple[Mapping[str, Any], ...]] | None = None

    @classmethod
    def for_adapter(
        cls,
        adapter: object,
        method: MethodOptions,
        logger: logging.Logger,
        seed: Any,
        n_startup_trials: Any,
        busy: BusyPolicy,
        slow_suggestion_s: float | None = None,
    ) -> SuggestionEngine:
        """The engine of a sampler or searcher (``adapter``: its class name starts each
        warning), its seed and start-up count checked."""
        return cls(
            method,
            name=type(adapter).__name__,
            logger=logger,
            seed=check_seed(seed),
            n_startup_trials=n_startup_trials,
            busy=busy,
            slow_suggestion_s=slow_suggestion_s,
        )

    # ------------------------------------------------------------------ observations
    def history(self, observations: Observations) -> History:
        """The ``observations`` as a :class:`History` to minimise: values flipped where
        maximised, trials without a value (``None`` or NaN) left out, pruned trials' values
        imputed from their curves (the pruned-trial imputation :attr:`pruned`; left out when it
        is ``"ignore"`` or a trial reported nothing), ±inf clipped.

        A multi-objective study's observations (one flag per objective in ``maximize``) go to
        :meth:`_objectives_history`."""
        o = observations
        if not isinstance(o.maximize, (bool, np.bool_)):
            flags = [bool(f) for f in o.maximize]
            if len(flags) < 2:
                raise ValueError(
                    f"maximize needs one flag per objective of a multi-objective study, got "
                    f"{flags}; give a single objective's as one bool."
                )
            return self._objectives_history(o, flags)
        mask = [bool(p) for p in o.pruned] if o.pruned is not None else [False] * len(o.configs)
        values = o.values
        if any(mask):
            sign = -1.0 if o.maximize else 1.0
            minimised = [{s: sign * v for s, v in finite_curve(c).items()} for c in o.curves or ()]
            raw = impute(
                [None if v is None else sign * v for v in values],
                minimised or [None] * len(values),
                mask,
                self.pruned,
            )
            values = [None if v is None else sign * v for v in raw]
        keep = [v is not None and not math.isnan(v) for v in values]
        kept = [(c, float(v)) for c, v, k in zip(o.configs, values, keep, strict=True) if k]
        numbers_ = np.asarray([v for _, v in kept], dtype=float)
        if o.maximize:
            numbers_ = -numbers_
        finite = np.isfinite(numbers_)
        if not finite.all():
            self._warn_infinite(int((~finite).sum()))
            lo, hi = (numbers_[finite].min(), numbers_[finite].max()) if finite.any() else (0, 0)
            numbers_ = np.clip(np.nan_to_num(numbers_, posinf=hi, neginf=lo), lo, hi)
        kept_pruned = [p for p, k in zip(mask, keep, strict=True) if k]
        return History(
            tuple(c for c, _ in kept),
            numbers_,
            tuple(o.pending),
            _kept_constraints(o.constraints, keep),
            kept_pruned,
        )

    def _objectives_history(self, observations: Observations, maximize: Sequence[bool]) -> History:
        """A multi-objective study's :class:`History`: each objective flipped where it is
        maximised, trials with a missing or NaN value left out, ±inf clipped to each objective's
        finite range (one warning per study), ``values`` their equal-weight scalarisation.

        Pruned trials are left out (they still count as issued and as taken configurations):
        Optuna keeps no learning curve in multi-objective studies, so there is nothing to impute
        their values per objective from."""
        o, m = observations, len(maximize)
        mask = [bool(p) for p in o.pruned] if o.pruned is not None else [False] * len(o.configs)
        rows = [_vector(v, m) for v in o.values]
        keep = [r is not None and not p for r, p in zip(rows, mask, strict=True)]
        kept = [r for r, k in zip(rows, keep, strict=True) if k]
        y = np.asarray(kept, dtype=float).reshape(-1, m) * np.where(maximize, -1.0, 1.0)
        finite = np.isfinite(y)
        if not finite.all():
            self._warn_infinite(int((~finite).sum()))
            for i in range(m):
                column = y[finite[:, i], i]
                lo, hi = (column.min(), column.max()) if len(column) else (0.0, 0.0)
                y[:, i] = np.clip(np.nan_to_num(y[:, i], posinf=hi, neginf=lo), lo, hi)
        history = History(
            tuple(c for c, k in zip(o.configs, keep, strict=True) if k),
            np.zeros(len(y)),
            tuple(o.pending),
            _kept_constraints(o.constraints, keep),
            objectives=y,
        )
        return dataclasses.replace(history, values=scalarize(history, np.full(m, 1.0 / m)))

    def _warn_infinite(self, count: int) -> None:
        self.reporter.warn(
            f"{self.name}: {count} objective value(s) are infinite; they are "
            "clipped to the range of the finite values for the model.",
            cause="infinite values",
        )

    def design_done(
        self, n_observed: int, n_issued: int, n_pruned: int = 0, n_stopped: int = 0
    ) -> bool:
        """Whether the start-up design is complete: ``n_issued`` trials (completed, pruned or
        running, not counting the one being sampled) reach ``n_startup_trials`` and the history
        holds something to learn from: one of the ``n_observed`` completed trials, or enough of
        the ``n_pruned`` pruned trials with values to rank them
        (:func:`common.space.pruned.can_start`).

        Running trials count (as in TPE with ``constant_liar``): with k workers, waiting for
        that many *completed* trials would hand out k − 1 more random configurations. Pruned
        trials count as TPE counts them: a study that prunes most trials still leaves the
        design. When the design is over but the study's ``n_stopped`` pruned trials (with or
        without reported values) leave nothing to learn from, the user hears it once.
        """
        if n_issued < self.n_startup_trials:
            return False
        if can_start(n_observed, n_pruned):
            return True
        if n_stopped > 0:
            self.reporter.warn(
                f"{self.name}: {n_issued} trials have run but none completed and too few "
                "reported an intermediate value before being pruned, so the model cannot start; "
                "trials stay random until one completes (a pruner with more warm-up steps or "
                "start-up trials lets some finish).",
                cause="cannot start",
            )
        return False

    def _design_done(self, history: History, n_issued: int, n_stopped: int) -> bool:
        """:meth:`design_done` for ``history`` (its pruned trials counted apart) in a study
        that pruned ``n_stopped`` trials, modelled or not."""
        n_pruned = history.n_pruned
        return self.design_done(len(history) - n_pruned, n_issued, n_pruned, n_stopped)

    def rng(self, trial_index: int, attempt: int = 0) -> np.random.Generator:
        """The generator of one suggestion: a function of the seed, the trial and the attempt."""
        return np.random.default_rng([self._base_seed, int(trial_index), int(attempt)])

    def reseed(self) -> None:
        """A fresh, unpredictable seed (Optuna's ``reseed_rng``)."""
        self._base_seed = _fresh_seed()

    # ------------------------------------------------------------------ suggestions
    def suggest(
        self,
        space: MixedSpace,
        observations: Observations,
        *,
        trial_index: int,
        n_issued: int,
        design: bool = True,
        study_fits: Callable[[], str] | None = None,
        claim: Callable[[Suggestion], Iterable[Mapping[str, Any]]] | None = None,
    ) -> Suggestion | None:
        """One configuration of ``space`` for trial number ``trial_index``: the whole path from
        the ``observations`` to the suggestion, their :meth:`history`, conditioning and the
        taken configurations included.

        ``n_issued`` counts the trials the start-up rule counts. ``design=False``: the
        adapter's own sampler makes the start-up design, and the engine returns ``None`` until
        it is done. ``study_fits`` reads the GP fits stored with the study (:meth:`warm_fits`
        of another worker); a strategy without fits of its own starts from them.
        ``claim(suggestion)`` records the suggestion (with its ``fits``) where other workers
        see it and returns the configurations they hold now: one of ours that another worker
        took meanwhile is sampled again, avoiding theirs, up to :data:`MAX_CLAIMS` times, the
        last time a random free configuration (workers that sample at the same moment from the
        same history make the same choices).
        """
        history = self.history(observations)
        n_stopped = sum(bool(p) for p in observations.pruned or ())  # modelled or not
        if not design and not self._design_done(history, n_issued, n_stopped):
            return None
        space = self._conditioned(space, history.configs)  # "the same configuration" per branch
        taken = ConfigSet(space)
        try:  # the observed configurations, encoded once each (:mod:`common.space.grown`)
            taken.add(self._observed.encode(space, observations.configs))
        except (KeyError, ValueError, TypeError):  # another space's among them: skipped
            taken.add_configs(observations.configs)
        taken.add_configs(history.pending)
        claimed: list[Mapping[str, Any]] = []  # configurations other workers took meanwhile
        for attempt in range(MAX_CLAIMS if claim is not None else 1):
            suggestion = self._suggest_once(
                space,
                dataclasses.replace(history, pending=(*history.pending, *claimed)),
                taken,
                trial_index=trial_index,
                n_issued=n_issued,
                attempt=attempt,
                random=attempt == MAX_CLAIMS - 1,
                n_stopped=n_stopped,
                study_fits=study_fits,
            )
            if claim is None:
                return suggestion
            if suggestion.source == "model":
                suggestion = dataclasses.replace(suggestion, fits=self.warm_fits())
            news = taken.not_taken(claim(suggestion))  # what other workers took meanwhile
            theirs = ConfigSet(space)
            theirs.add_configs(news)
            if suggestion.config not in theirs:
                return suggestion
            claimed.extend(news)
            taken.add_configs(news)
        self.reporter.warn(
            f"{self.name}: trial {trial_index}'s configuration was taken by another trial each "
            f"of {MAX_CLAIMS} times it sampled; it runs the last one anyway.",
            cause="claims lost",
        )
        return suggestion

    def _conditioned(self, space: MixedSpace, configs: Sequence[Mapping[str, Any]]) -> MixedSpace:
        """:func:`common.space.conditioning.conditioned`: where the last call's configurations
        (the same objects) needed no conditions on a space of the same encoding, only the new
        ones are checked."""
        key, last = encoding_key(space), self._unconditioned
        configs = tuple(configs)
        n = len(last[1]) if last is not None and last[0] == key else -1
        if 0 <= n <= len(configs) and all(map(operator.is_, last[1], configs)):
            if conditioned(space, configs[n:]) is space:
                self._unconditioned = (key, configs)
                return space
        found = conditioned(space, configs)
        self._unconditioned = (key, configs) if found is space else None
        return found

    def _suggest_once(
        self,
        space: MixedSpace,
        history: History,
        taken: ConfigSet,
        *,
        trial_index: int,
        n_issued: int,
        attempt: int,
        random: bool,
        n_stopped: int,
        study_fits: Callable[[], str] | None,
    ) -> Suggestion:
        """One pick: the design, a random free configuration (``random``), or the model's (a
        repeat of a ``taken`` one replaced by a random free one, a failure by a fallback)."""
        start = time.perf_counter()
        rng = self.rng(trial_index, attempt)
        if not self._design_done(history, n_issued, n_stopped):
            config, source = self.random_free(space, taken, rng), "design"
        elif random:
            config, source = self.random_free(space, taken, rng), "random"
        else:
            modelled = single_objective(history, rng)  # one scalarisation per suggestion
            config, source = self._model_suggestion(space, modelled, rng, study_fits), "model"
            if config is None:
                config, source = self.random_free(space, taken, rng), "fallback"
            elif config in taken:
                config, source = self.random_free(space, taken, rng), "random"
        seconds = time.perf_counter() - start
        slow = self.slow_suggestion_s
        if source == "model" and slow is not None and seconds > slow:
            self.reporter.warn(
                f"{self.name} took {seconds:.1f} s for one suggestion ({len(history)} "
                f"observations, {len(history.pending)} running trials, {space.dim} modelled "
                "parameters); fewer trials or parameters make it faster.",
                cause="slow suggestion",
            )
        return Suggestion(config, source, seconds)

    def random_free(
        self, space: MixedSpace, taken: ConfigSet, rng: np.random.Generator
    ) -> dict[str, Any]:
        """A uniformly random configuration not in ``taken``; when every configuration of the
        space is taken, a random one (said once: from then on trials repeat configurations).
        Only a space whose configurations can be listed (no free float) is called exhausted."""
        rows = space.sample(RANDOM_DRAWS, rng)
        free = rows[~taken.contains(rows)]
        if not len(free):
            grid = space.all_rows(ENUMERATION_LIMIT)
            if grid is not None:
                free = grid[~taken.contains(grid)]
                free = free[rng.permutation(len(free))]
        if len(free):
            return space.decode(free[:1])[0]
        if grid is None:  # a free float (or too many configurations): the space is not exhausted
            self.reporter.warn(
                f"{self.name}: none of {RANDOM_DRAWS} random configurations was free of the "
                f"{len(taken)} tried or running ones; this trial may repeat one.",
                cause="no free random draw",
            )
            return space.decode(rows[:1])[0]
        self.reporter.warn(
            f"{self.name}: every configuration of the search space has been tried or is running "
            f"({len(taken)} of them); from here on trials repeat configurations.",
            cause="search space exhausted",
        )
        return space.decode(rows[:1])[0]

    def _model_suggestion(
        self,
        space: MixedSpace,
        history: History,
        rng: np.random.Generator,
        study_fits: Callable[[], str] | None = None,
    ) -> dict[str, Any] | None:
        """The strategy's suggestion, or ``None`` (with a warning per cause) if it failed."""
        with self._lock, single_thread(), reporting_to(self.reporter):
            if study_fits is not None:
                self._adopt_study_fits(study_fits)
            try:
                strategy = self.strategy
                config = strategy.suggest(space, history, 1, rng)[0]
                space.encode([config])  # a malformed suggestion fails here, not in the trial
                return config
            except Exception as err:  # a suggestion never crashes the user's study
                self.reporter.warn(
                    f"{self.name} failed to suggest ({type(err).__name__}: {err}); the trial "
                    "gets a random configuration instead.",
                    cause=f"failure {type(err).__name__}",
                )
                return None

    def _adopt_study_fits(self, study_fits: Callable[[], str]) -> None:
        """A strategy new to the study (a new worker, a restarted job) warm-starts from the fits
        stored with it (:mod:`common.models.warm_store`) instead of fitting from its priors."""
        try:
            if not self.strategy.has_warm_start and (text := study_fits()):
                self.strategy.adopt_warm(text)
        except Exception as err:  # the fits are a shortcut: without them the model fits anew
            self.reporter.warn(
                f"{self.name} could not use the GP fits stored with the study "
                f"({type(err).__name__}: {err}); it fits its model anew.",
                cause="study fits",
            )

    def warm_fits(self) -> str:
        """The strategy's latest GP fits as text to store with the study (``""`` before the model
        has run), for :meth:`suggest`'s ``study_fits`` in other workers."""
        if self._strategy is None:
            return ""
        try:
            with self._lock:
                return self._strategy.warm_text()
        except Exception as err:
            self.reporter.warn(
                f"{self.name} could not write its GP fits for other workers "
                f"({type(err).__name__}: {err}); a new worker fits its model anew.",
                cause="warm fits",
            )
            return ""

    @property
    def strategy(self) -> Strategy:
        """The method's strategy, built on first use."""
        if self._strategy is None:
            self._strategy = self.method.make(self.busy)
        return self._strategy

    # ------------------------------------------------------------------ pickling / copying
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        state["_unconditioned"] = None  # a copy checks the configurations anew
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def _kept_constraints(
    constraints: Sequence[Sequence[float]] | None, keep: Sequence[bool]
) -> np.ndarray | None:
    """The ``constraints`` rows of the kept trials as an (n, k) array, NaN-padded."""
    if constraints is None:
        return None
    rows = [list(r) for r, k in zip(constraints, keep, strict=True) if k]
    width = max((len(r) for r in rows), default=0)
    kept = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        kept[i, : len(r)] = r
    return kept


def _vector(value: Sequence[float | None] | None, m: int) -> list[float] | None:
    """A trial's ``m`` objective values as floats, ``None`` when one is missing or NaN."""
    if value is None or isinstance(value, (str, bytes)) or len(value) != m:
        return None
    try:
        row = [float(v) for v in value]  # a None among them is a missing value
    except (TypeError, ValueError):
        return None
    return None if any(math.isnan(v) for v in row) else row


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().generate_state(1)[0])
