"""What every mixbo Tune searcher shares: Tune's side of :class:`common.engine.SuggestionEngine`.

The searcher only translates. Its own jobs are Tune's: the Tune space becomes a
:class:`common.MixedSpace` (see :mod:`ray_plugins._space`); the trials it suggested and the points
it was given are kept, in the order they were asked, as records; ``on_trial_complete`` fills them
in; ``save`` and ``restore`` carry them. Each suggestion hands the records to the engine, which
builds the history (completed trials, live ones as pending), applies the start-up rule, seeds,
filters repeats, falls back and times, exactly as under Optuna. Everything is plain data and the
seed, so a restored searcher suggests what the original would have.

A trial a scheduler stopped early (ASHA, HyperBand, median stopping) is not a trial completed at
full budget: each record keeps the metric by ``training_iteration`` from ``on_trial_result``, and
a completed trial that ran fewer iterations than the most any completed trial ran is modelled as
Optuna's pruned trials are, from its learning curve (:mod:`common.space.pruned`).

Several objectives (``metric=[...]``, ``mode=[...]``, as Ray's ``OptunaSearch`` takes them) are
modelled as under Optuna: each suggestion scalarises them with its own random weights
(:mod:`common.acquisition.scalarization`). A scheduler needs a single metric, so such a searcher
runs with FIFO scheduling; a trial stopped early is not modelled (there is no curve per objective
to impute its values from). Under any other scheduler its first suggestion raises, before a trial
starts (:func:`_check_scheduler`).
"""

from __future__ import annotations

import logging
import math
import numbers
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import FrameType
from typing import Any

from ray import cloudpickle
from ray.tune.execution.tune_controller import TuneController
from ray.tune.result import DEFAULT_METRIC
from ray.tune.schedulers import FIFOScheduler
from ray.tune.search import UNDEFINED_METRIC_MODE, UNDEFINED_SEARCH_SPACE, Searcher

from common.batch.busy import BusyPolicy
from common.engine import Observations, SuggestionEngine
from common.methods.options import MethodOptions
from common.space.history import History
from ray_plugins._space import TuneSpace, convert_search_space

_logger = logging.getLogger("ray.tune.search.mixbo")

_LIVE, _COMPLETE, _FAILED = "live", "complete", "failed"
_ITERATION = "training_iteration"


@dataclass
class _Record:
    """One trial (or given point): its core configuration, state and raw metric value, the
    metric by training iteration, the iterations it ran and, for a given point, whether it was
    pruned (``None``: decided from the iterations)."""

    config: dict[str, Any]
    state: str
    value: float | tuple[float, ...] | None = None  # one per metric with several metrics
    suggested: bool = True
    constraints: tuple[float, ...] = ()
    outside: bool = False  # its configuration lies outside the current space (not modelled)
    curve: dict[int, float] = field(default_factory=dict)
    iterations: int | None = None
    stopped: bool | None = None


class MixedBOSearch(Searcher):
    """Base of mixbo's Tune searchers: a method's validated options run by the shared engine.

    Args (every searcher's):
        space: A Tune search space (dict of domains and constants, possibly nested; a
            ``tune.choice`` of categories holding domains is a conditional space, modelled
            branch by branch), or the result of :meth:`convert_search_space`. Leave it out to
            take ``param_space`` from the Tuner.
        metric: The reported metric to optimise (``"_metric"`` if only ``mode`` is given), or a
            list of them: a multi-objective search (ParEGO's scalarisations,
            :mod:`common.acquisition.scalarization`), with FIFO scheduling.
        mode: ``"min"`` or ``"max"``, or a list of them, one per metric.
        points_to_evaluate: Configurations to try first, in order; missing parameters are drawn
            at random.
        evaluated_rewards: Metric values of ``points_to_evaluate`` (with several metrics, a list
            of values per point); when given, those points are added as observations instead of
            being evaluated.
        seed: Seed of the searcher's own random generator (global RNGs are never touched).
        n_startup_trials: Trials drawn at random before BO starts (``points_to_evaluate`` and
            evaluated points count towards them).
        max_trials: After this many suggestions, ``suggest`` returns ``Searcher.FINISHED``.
        max_concurrent: Suggestions are withheld (``None``) while this many trials are live;
            0 means no limit of the searcher's own (``TuneConfig.max_concurrent_trials`` sets it).
        slow_suggestion_s: Log a warning (once) when one suggestion takes longer than this.
        pending, penalizer, lipschitz: How live trials count
        (:class:`common.batch.busy.BusyPolicy`):
            ``pending="playbook"`` penalises the acquisition around them (PLAyBOOK, the default),
            ``"kriging_believer"`` conditions the GP on its mean there, ``"ignore"`` neither;
            ``penalizer`` is ``"hlp"`` (hard local, default) or ``"lp"``, ``lipschitz``
            ``"local"`` (default) or ``"global"``.
        constraints: Names of reported metrics that must be ≤ 0 for a trial to be feasible.
            Every method then weighs its acquisition by the probability of feasibility and the
            incumbent is the best feasible trial (:mod:`common.acquisition.feasibility`); a trial
            that does not report one of them counts as of unknown feasibility.
    """

    def __init__(
        self,
        method: MethodOptions,
        space: Mapping[str, Any] | TuneSpace | None = None,
        metric: str | Sequence[str] | None = None,
        mode: str | Sequence[str] | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        evaluated_rewards: Sequence[float | Sequence[float]] | None = None,
        *,
        seed: int | None = None,
        n_startup_trials: int = 10,
        max_trials: int | None = None,
        max_concurrent: int = 0,
        slow_suggestion_s: float = 5.0,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
        constraints: Sequence[str] = (),
    ) -> None:
        metric, mode = _check_mode(metric, mode)
        if isinstance(constraints, str) or not all(isinstance(c, str) for c in constraints):
            raise ValueError(
                f"constraints must be a list of reported metric names, got {constraints!r}."
            )
        self._constraints = tuple(constraints)
        super().__init__(metric=metric, mode=mode)
        busy = BusyPolicy(pending, penalizer, lipschitz)
        self._engine = SuggestionEngine.for_adapter(
            self, method, _logger, seed, n_startup_trials, busy, slow_suggestion_s
        )
        if max_trials is not None and max_trials < 0:
            raise ValueError(f"max_trials must be >= 0, got {max_trials}.")
        if max_concurrent < 0:
            raise ValueError(f"max_concurrent must be >= 0, got {max_concurrent}.")
        n_points = len(points_to_evaluate or ())
        if evaluated_rewards is not None and len(evaluated_rewards) != n_points:
            raise ValueError(
                f"evaluated_rewards has {len(evaluated_rewards)} values for {n_points} "
                "points_to_evaluate."
            )
        self._max_trials = max_trials
        self._max_concurrent = max_concurrent
        self._space: TuneSpace | None = None
        self._trials: dict[str, _Record] = {}  # in the order they were asked
        self._n_suggested = 0
        self._n_given = 0
        self._points: list[Mapping[str, Any]] = list(points_to_evaluate or ())
        self._rewards = list(evaluated_rewards) if evaluated_rewards is not None else None
        if space:
            self._set_space(space)

    @property
    def _strategy(self):
        """The method's strategy (built on first use)."""
        return self._engine.strategy

    # ------------------------------------------------------------------ search space
    @staticmethod
    def convert_search_space(spec: Mapping[str, Any]) -> TuneSpace:
        """A Tune search space (nested dicts of domains and constants) to mixbo's.

        Supports ``uniform``, ``loguniform``, ``quniform``, ``qloguniform``, ``randint``,
        ``lograndint``, ``qrandint``, ``qlograndint`` and ``choice`` (any categories, stored by
        index); raises a ``ValueError`` naming the parameter for ``grid_search``, ``sample_from``
        and unbounded ``randn``.
        """
        return convert_search_space(spec)

    def set_search_properties(
        self,
        metric: str | list[str] | None,
        mode: str | list[str] | None,
        config: dict,
        **spec: Any,
    ) -> bool:
        if self._space is not None:  # Tune's convention: the constructor's space wins
            self._set_metric_mode(self._metric or metric, self._mode or mode)  # fill in the gaps
            return False
        space = convert_search_space(config)
        self._set_metric_mode(metric or self._metric, mode or self._mode)
        self._set_space(space)
        return True

    def set_max_concurrency(self, max_concurrent: int) -> bool:
        """Enforce Tune's ``max_concurrent_trials`` here: ``suggest`` returns ``None`` when full."""
        self._max_concurrent = max(int(max_concurrent), 0)
        return True

    def _set_metric_mode(self, metric: Any, mode: Any) -> None:
        self._metric, self._mode = _check_mode(metric, mode)
        self._add_rewarded_points()

    def _set_space(self, space: Mapping[str, Any] | TuneSpace) -> None:
        self._space = convert_search_space(space)
        converted = [self._space.to_core(p, partial=True) for p in self._points]  # validates them
        if self._rewards is None:
            self._points = converted
        self._add_rewarded_points()

    def _add_rewarded_points(self) -> None:
        """``points_to_evaluate`` with ``evaluated_rewards`` become observations once the space
        and the mode are known."""
        if self._rewards is None or self._space is None or not self._mode:
            return
        points, rewards = self._points, self._rewards
        self._points, self._rewards = [], None
        for point, reward in zip(points, rewards, strict=True):
            self.add_evaluated_point(point, reward)

    def _check_ready(self) -> None:
        if self._space is None:
            raise RuntimeError(
                UNDEFINED_SEARCH_SPACE.format(cls=type(self).__name__, space="space")
            )
        if self._mode and not self._metric:
            if isinstance(self._mode, list):
                raise ValueError(
                    f"{type(self).__name__}: mode is a list (several objectives), so metric must "
                    "be the list of their names."
                )
            self._metric = DEFAULT_METRIC
        if not self._metric or not self._mode:
            raise RuntimeError(
                UNDEFINED_METRIC_MODE.format(
                    cls=type(self).__name__, metric=self._metric, mode=self._mode
                )
            )

    # ------------------------------------------------------------------ Tune API
    def suggest(self, trial_id: str) -> dict | str | None:
        self._check_ready()
        if isinstance(self._metric, list):
            _check_scheduler(type(self).__name__, self._metric)
        space = self._space
        assert space is not None
        known = self._trials.get(trial_id)
        if known is not None:  # asked twice for the same trial: the same answer
            return space.to_config(known.config)
        if self._max_trials is not None and self._n_suggested >= self._max_trials:
            return Searcher.FINISHED
        if self._max_concurrent and self._n_live() >= self._max_concurrent:
            return None
        trial_index = len(self._trials)
        if self._points:
            point = self._points.pop(0)
            config = {**space.sample(1, self._engine.rng(trial_index))[0], **point}
        else:
            n_issued = sum(r.state != _FAILED for r in self._trials.values())
            config = self._engine.suggest(
                space.mixed, self._observations(), trial_index=trial_index, n_issued=n_issued
            ).config
        config = space.active(config)  # a conditional space: the branches taken only
        self._trials[trial_id] = _Record(config, _LIVE)
        self._n_suggested += 1
        return space.to_config(config)

    def on_trial_result(self, trial_id: str, result: dict) -> None:
        """Keep the metric by training iteration: a trial stopped early is modelled from it."""
        record = self._trials.get(trial_id)
        if record is not None and record.state == _LIVE and isinstance(self._metric, str):
            _add_to_curve(record, result, self._metric)

    def on_trial_complete(
        self, trial_id: str, result: dict | None = None, error: bool = False
    ) -> None:
        record = self._trials.get(trial_id)
        if record is None:
            self._engine.reporter.warn(
                f"{type(self).__name__}: completion of unknown trial {trial_id}; ignored.",
                cause="unknown trial",
            )
            return
        if record.state != _LIVE:
            self._engine.reporter.warn(
                f"{type(self).__name__}: trial {trial_id} completed twice; the second result "
                "is ignored.",
                cause="completed twice",
            )
            return
        if error:
            _logger.debug(f"{type(self).__name__}: trial {trial_id} errored; not modelled.")
            record.state = _FAILED
            return
        value = self._metric_value(trial_id, result)
        if value is None:
            record.state = _FAILED
            return
        record.state, record.value = _COMPLETE, value
        if isinstance(self._metric, str):  # several metrics: no curves (the module docstring)
            _add_to_curve(record, result, self._metric)
        iteration = (result or {}).get(_ITERATION)
        if isinstance(iteration, numbers.Integral) and not isinstance(iteration, bool):
            record.iterations = int(iteration)
        elif getattr(record, "curve", None):
            record.iterations = max(record.curve)
        record.constraints = tuple(_constraint_value(result, name) for name in self._constraints)

    def add_evaluated_point(
        self,
        parameters: dict,
        value: float | Sequence[float],
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """An observation made outside this searcher (warm start); failed ones are kept for the
        record but not modelled, pruned ones are modelled from ``intermediate_values`` (one per
        step, as Optuna's pruned trials). With several metrics, ``value`` lists one value per
        metric."""
        self._check_ready()
        assert self._space is not None
        config = self._space.to_core(parameters)
        self._n_given += 1
        key = f"__evaluated_{self._n_given}"
        if error:
            self._trials[key] = _Record(config, _FAILED, suggested=False)
            return
        if pruned:
            curve = {
                i: float(v)
                for i, v in enumerate(intermediate_values or (), start=1)
                if isinstance(v, numbers.Real) and math.isfinite(v)
            }
            self._trials[key] = _Record(
                config, _COMPLETE, None, suggested=False, curve=curve, stopped=True
            )
            return
        if isinstance(self._metric, list):
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise ValueError(
                    f"{type(self).__name__}: with metrics {self._metric}, a value is a list of "
                    f"{len(self._metric)} numbers, got {value!r}."
                )
            if len(value) != len(self._metric):
                raise ValueError(
                    f"{type(self).__name__}: {len(value)} values for the "
                    f"{len(self._metric)} metrics {self._metric}."
                )
            reported = dict(zip(self._metric, value, strict=True))
        else:
            reported = {self._metric: value}
        number = self._metric_value(key, reported)
        state = _FAILED if number is None else _COMPLETE
        self._trials[key] = _Record(config, state, number, suggested=False)

    # ------------------------------------------------------------------ saving
    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "wb") as f:
            cloudpickle.dump(self.get_state(), f)

    def restore(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "rb") as f:
            self.set_state(cloudpickle.load(f))

    def get_state(self) -> dict:
        return self.__dict__.copy()

    def set_state(self, state: dict) -> None:
        """The saved searcher, but a search space this one was given wins over the saved one:
        a restored searcher with a changed space (a widened range, a new choice) keeps modelling
        the saved trials that lie inside it (:func:`moved_records`)."""
        given = self._space
        self.__dict__.update(state)
        if given is not None and self._space is not None and not same_space(given, self._space):
            self._trials = moved_records(self._trials, self._space, given)
            self._space = given

    # ------------------------------------------------------------------ helpers
    @property
    def space(self) -> TuneSpace | None:
        """The converted search space (``None`` until one is given)."""
        return self._space

    def history(self) -> History:
        """Completed observations in the order they were asked, live trials as pending; those
        stopped early modelled from their curves (:mod:`common.space.pruned`)."""
        return self._engine.history(self._observations())

    def _observations(self) -> Observations:
        """The trials as the engine takes them: the completed ones in the order they were asked
        (those stopped early marked, with their curves), the live ones as pending."""
        done = [r for r in self._trials.values() if r.state == _COMPLETE and not r.outside]
        ran = [getattr(r, "iterations", None) or 0 for r in done]  # older checkpoints lack it
        by_hand = [_stopped_by_hand(r) for r in done]
        full = max((n for n, h in zip(ran, by_hand, strict=True) if not h), default=0)
        stopped = [h or 0 < n < full for n, h in zip(ran, by_hand, strict=True)]
        constraints = None
        if self._constraints:
            width = len(self._constraints)
            constraints = [r.constraints or (math.nan,) * width for r in done]
        several = isinstance(self._mode, list)
        return Observations(
            [r.config for r in done],
            [r.value for r in done],
            [r.config for r in self._trials.values() if r.state == _LIVE and not r.outside],
            maximize=[m == "max" for m in self._mode] if several else self._mode == "max",
            constraints=constraints,
            curves=[getattr(r, "curve", {}) for r in done],
            pruned=stopped,
        )

    def _n_live(self) -> int:
        return sum(r.state == _LIVE for r in self._trials.values())

    def _metric_value(
        self, trial_id: str, result: Mapping[str, Any] | None
    ) -> float | tuple[float, ...] | None:
        """The reported metric as a float (±inf kept: the history clips it), with several
        metrics a tuple of them, or ``None`` with a warning (once per kind of problem) when it
        cannot be modelled: a trial missing one of several metrics counts as failed."""
        if isinstance(self._metric, list):
            values = [self._one_metric(trial_id, result, m) for m in self._metric]
            return None if any(v is None for v in values) else tuple(values)
        return self._one_metric(trial_id, result, self._metric)

    def _one_metric(
        self, trial_id: str, result: Mapping[str, Any] | None, metric: str
    ) -> float | None:
        """``metric``'s reported value as a float, or ``None`` with a warning."""
        name, warn = type(self).__name__, self._engine.reporter.warn
        if not result or metric not in result:
            warn(
                f"{name}: trial {trial_id} reported no {metric!r}; it is left out of the "
                "model (said once; later trials like it are logged at debug level).",
                cause="metric missing",
            )
            return None
        value = result[metric]
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            warn(
                f"{name}: trial {trial_id} reported {metric}={value!r}, not a number; it "
                "is left out of the model.",
                cause="metric not a number",
            )
            return None
        value = float(value)
        if math.isnan(value):
            warn(
                f"{name}: trial {trial_id} reported {metric}=nan; it is left out of the model.",
                cause="metric nan",
            )
            return None
        return value


def _check_scheduler(searcher: str, metrics: list[str]) -> None:
    """Raise if the Tune run asking for a suggestion has a scheduler other than FIFO: Tune's
    schedulers stop, pause or mutate trials by one metric, which several metrics do not give.

    Tune hands a searcher no reference to its scheduler, so the run's ``TuneController`` is found
    on the call stack (it asks its search algorithm for each new trial); outside a Tune run (a
    searcher driven by hand) there is nothing to check.
    """
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and not isinstance(frame.f_locals.get("self"), TuneController):
        frame = frame.f_back
    if frame is None:
        return
    scheduler = frame.f_locals["self"].scheduler_alg
    if type(scheduler) is FIFOScheduler:  # ASHA, HyperBand, PBT, ... subclass it
        return
    raise ValueError(
        f"{searcher} with several metrics {metrics} runs with FIFO scheduling only, but this "
        f"Tune run has a {type(scheduler).__name__}, which decides by one metric. Leave "
        "TuneConfig's scheduler out (Tune's default is FIFO), or search on one metric (for "
        "instance one you report that combines them) to use this scheduler."
    )


def same_space(a: TuneSpace, b: TuneSpace) -> bool:
    """Whether two converted spaces model the same parameters with the same values."""
    if a.mixed != b.mixed or len(a.dimensions) != len(b.dimensions):
        return False
    for d, e in zip(a.dimensions, b.dimensions, strict=True):
        if (d.path, d.kind, d.integer, d.q, d.branch) != (e.path, e.kind, e.integer, e.q, e.branch):
            return False
        if d.kind == "choice" and not d.conditional:
            try:
                if d.categories != e.categories:
                    return False
            except Exception:  # categories that cannot be compared: treated as changed
                return False
    return True


def moved_records(
    records: Mapping[str, _Record], old: TuneSpace, new: TuneSpace
) -> dict[str, _Record]:
    """``records`` (core configurations of ``old``) as configurations of ``new``: each goes back
    to the values its trial received and is read in ``new`` (a category by its value, not its
    position). One whose values lie outside ``new`` (a range that shrank, a choice dropped, a
    parameter added) is kept, so its trial stays known, but marked ``outside``: not modelled."""
    moved = {}
    for key, record in records.items():
        try:
            config = new.to_core(old.to_config(record.config))
            outside = False
        except (ValueError, KeyError, IndexError, TypeError):
            config, outside = dict(record.config), True
        moved[key] = replace(record, config=config, outside=outside)
    return moved


def _stopped_by_hand(record: _Record) -> bool:
    """A given point marked pruned (records saved before curves were kept have no mark)."""
    return bool(getattr(record, "stopped", None))


def _add_to_curve(record: _Record, result: Mapping[str, Any] | None, metric: str | None) -> None:
    """The result's metric at its training iteration (the next one if it reports none)."""
    if not result or metric not in result:
        return
    value = result[metric]
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        return
    if not hasattr(record, "curve"):
        record.curve = {}
    step = result.get(_ITERATION)
    if isinstance(step, bool) or not isinstance(step, numbers.Integral):
        step = max(record.curve, default=0) + 1
    record.curve[int(step)] = float(value)


def _constraint_value(result: Mapping[str, Any] | None, name: str) -> float:
    """A reported constraint metric as a float, NaN where it is missing or not a number."""
    value = (result or {}).get(name)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return math.nan
    return float(value)


def _check_mode(metric: Any, mode: Any) -> tuple[Any, Any]:
    """``metric`` and ``mode`` checked, lists as lists: one metric name and ``"min"`` or
    ``"max"``, or (several objectives, as Ray's ``OptunaSearch`` takes them) lists of names and
    modes of the same length."""
    several = isinstance(metric, (list, tuple)), isinstance(mode, (list, tuple))
    if not any(several):
        if mode is not None and mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}.")
        return metric, mode
    if metric is not None and not all(several) and mode is not None:
        raise ValueError(
            f"metric and mode must both be lists for several objectives, got metric={metric!r} "
            f"and mode={mode!r}."
        )
    metric = None if metric is None else list(metric)
    mode = None if mode is None else list(mode)
    if metric is not None and (not metric or not all(isinstance(m, str) for m in metric)):
        raise ValueError(f"metric must be a list of reported metric names, got {metric!r}.")
    if mode is not None and (not mode or any(m not in ("min", "max") for m in mode)):
        raise ValueError(f"each mode must be 'min' or 'max', got {mode!r}.")
    if metric is not None and mode is not None and len(metric) != len(mode):
        raise ValueError(
            f"metric and mode must have the same length: {len(metric)} metrics {metric} but "
            f"{len(mode)} modes {mode}."
        )
    return metric, mode
