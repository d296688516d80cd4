"""What every mixbo Optuna sampler shares: Optuna's side of :class:`common.engine.SuggestionEngine`.

The sampler only translates. Its own jobs are Optuna's: the search space (the union of every
parameter the study's trials used, conditional ones included: :mod:`common.space.conditioning`
learns which trials use which), reading the study's trials (running trials' parameters from their
system attributes, so a trial sampled by another thread or process but not yet reported is a busy
point), and storing each suggestion as the trial's claim, reading back what other workers have
taken (the engine samples again where another worker took ours). Everything else (the history,
conditioning, the taken configurations, the start-up rule, seeds, repeats, claims, fallbacks,
warnings) is the engine's, in one call per suggestion.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, TPESampler
from optuna.samplers._base import _process_constraints_after_trial
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from common.batch.busy import BusyPolicy
from common.engine import Observations, Suggestion, SuggestionEngine
from common.methods.options import MethodOptions
from optuna_plugins._space import to_mixed_space

_logger = optuna.logging.get_logger("optuna.mixbo")

# Each trial's relative parameters are shared with other threads and processes through its system
# attributes (as Optuna's GPSampler does), so that a trial sampled elsewhere but not yet reported
# still counts as a busy point. Values are internal representations (category indices), as JSON
# chunked to the RDB storage's column limit.
_RELATIVE_PARAMS_KEY = "mixbo:relative_params"
# The fitted GP hyper-parameters after each model suggestion (common.models.warm_store), so that a
# new worker, or a restarted job, warm-starts from the study's latest fits instead of its priors.
_WARM_FITS_KEY = "mixbo:warm_fits"
_SYSTEM_ATTR_MAX_LENGTH = 2045
# pruned trials are observations too (common.space.pruned): their learning curves are modelled
_STATES = (TrialState.COMPLETE, TrialState.RUNNING, TrialState.PRUNED)


def _store_text(study: Study, trial: FrozenTrial, key: str, text: str) -> None:
    """``text`` as the trial's system attributes ``key:0``, ``key:1``, … (chunked to the RDB
    storage's column limit)."""
    chunks = [
        text[i : i + _SYSTEM_ATTR_MAX_LENGTH] for i in range(0, len(text), _SYSTEM_ATTR_MAX_LENGTH)
    ]
    # an empty chunk ends the text, so a shorter re-sampling never reads an older, longer tail
    for i, chunk in enumerate([*chunks, ""]):
        study._storage.set_trial_system_attr(trial._trial_id, f"{key}:{i}", chunk)


def _stored_text(trial: FrozenTrial, key: str) -> str:
    """The text :func:`_store_text` stored under ``key`` (``""`` if none)."""
    chunks, i = [], 0
    while chunk := trial.system_attrs.get(f"{key}:{i}"):
        chunks.append(chunk)
        i += 1
    return "".join(chunks)


def _store_relative_params(
    study: Study, trial: FrozenTrial, params: dict[str, Any], space: dict[str, BaseDistribution]
) -> None:
    text = json.dumps({k: space[k].to_internal_repr(v) for k, v in params.items()})
    _store_text(study, trial, _RELATIVE_PARAMS_KEY, text)


def _latest_warm_fits(trials: Sequence[FrozenTrial]) -> str:
    """The fits stored by the latest trial that has any (``""`` if none)."""
    for t in sorted(trials, key=lambda t: t.number, reverse=True):
        if text := _stored_text(t, _WARM_FITS_KEY):
            return text
    return ""


def _pending_params(
    trial: FrozenTrial, space: dict[str, BaseDistribution]
) -> dict[str, Any] | None:
    """A running trial's parameters over ``space`` (sampled or only drawn), if all are known."""
    text = _stored_text(trial, _RELATIVE_PARAMS_KEY)
    params: dict[str, Any] = {}
    if text:
        try:
            stored = json.loads(text)
            for name, internal in stored.items():
                if name in space and space[name]._contains(internal):
                    params[name] = space[name].to_external_repr(internal)
        except (ValueError, TypeError, IndexError):
            params = {}
    if not fits_space(trial, space):
        return None  # running outside the current range: not a busy point of this space
    for name, value in trial.params.items():
        if name in space:
            params[name] = value
    return params or None


def _config(trial: FrozenTrial, search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
    """A completed trial's parameters of ``search_space`` (those of its branch)."""
    return {name: trial.params[name] for name in search_space if name in trial.params}


def _constraint_rows(values: Sequence[dict[str, float]]) -> list[list[float]] | None:
    """Each trial's constraint ``values`` by constraint name (NaN where a trial lacks one), or
    ``None`` when no trial has any."""
    names = sorted({name for v in values for name in v})
    if not names:
        return None
    return [[float(v.get(name, math.nan)) for name in names] for v in values]


def union_search_space(trials: Sequence[FrozenTrial]) -> dict[str, BaseDistribution]:
    """Every parameter the ``trials`` used, in sorted order, with its latest distribution (that of
    the highest-numbered trial using it), but those with a single value.

    A parameter whose range changed during the study stays modelled over its current range;
    the trials whose values lie outside it are left out of the model (:func:`fits_space`).
    """
    latest: dict[str, BaseDistribution] = {}
    for t in sorted(trials, key=lambda t: t.number):
        latest.update(t.distributions)
    return {name: latest[name] for name in sorted(latest) if not latest[name].single()}


class UnionSearchSpace:
    """:func:`union_search_space`, continued: the latest distributions over the leading
    finished trials are kept, and where the next call's trials begin with them (the same
    objects, in the same order) only the trials after them are read."""

    def __init__(self) -> None:
        # the leading finished trials of the last call and their latest distributions
        self._last: tuple[tuple[FrozenTrial, ...], dict[str, BaseDistribution]] = ((), {})

    def of(self, trials: Sequence[FrozenTrial]) -> dict[str, BaseDistribution]:
        """:func:`union_search_space` of ``trials``."""
        trials = sorted(trials, key=lambda t: t.number)
        done, latest = self._last
        n = len(done)
        if not (n <= len(trials) and all(map(operator.is_, done, trials))):
            n, latest = 0, {}
        settled = n  # the leading finished trials end here
        while settled < len(trials) and trials[settled].state != TrialState.RUNNING:
            settled += 1
        latest = dict(latest)
        for t in trials[n:settled]:
            latest.update(t.distributions)
        self._last = (tuple(trials[:settled]), latest)
        latest = dict(latest)
        for t in trials[settled:]:
            latest.update(t.distributions)
        return {name: latest[name] for name in sorted(latest) if not latest[name].single()}


def value_fits(dist: BaseDistribution, value: Any) -> bool:
    """Whether ``value`` is one of ``dist``'s values (inside its range, on its grid, one of its
    choices), as Optuna decides when it takes a relative parameter."""
    try:
        return bool(dist._contains(dist.to_internal_repr(value)))
    except (ValueError, TypeError, IndexError):
        return False


def fits_space(trial: FrozenTrial, search_space: dict[str, BaseDistribution]) -> bool:
    """Whether each of the ``trial``'s parameters of ``search_space`` is a value of its current
    distribution.

    A trial from before a range shrank (or a choice was dropped) is an observation outside the
    space the model encodes: it is left out rather than clipped onto the new bounds, where it
    would claim a value for a point nobody evaluated.
    """
    return all(
        value_fits(search_space[name], value)
        for name, value in trial.params.items()
        if name in search_space and not _same(trial.distributions[name], search_space[name])
    )


def _same(a: BaseDistribution, b: BaseDistribution) -> bool:
    """Optuna's equality of two distributions, first by their fields' plain equality: the
    storage gives every trial its own copy of each distribution, and Optuna's comparison of
    categorical choices one by one (NaN-aware), repeated for every trial on every ask, grows
    into a noticeable share of a long study's asks."""
    return (type(a) is type(b) and a.__dict__ == b.__dict__) or a == b


@dataclass(frozen=True)
class Finished:
    """What a finished trial contributes to the observations over one search space: its
    configuration (``None``: it lies outside the space, :func:`fits_space`), its values (``None``
    unless it completed), its constraint values, its learning curve and whether it was pruned."""

    config: dict[str, Any] | None
    values: list[float] | None
    constraints: dict[str, float]
    curve: dict[int, float]
    pruned: bool

    @classmethod
    def of(cls, trial: FrozenTrial, search_space: dict[str, BaseDistribution]) -> Finished:
        return cls(
            _config(trial, search_space) if fits_space(trial, search_space) else None,
            trial.values if trial.state == TrialState.COMPLETE else None,
            trial.constraints,
            trial.intermediate_values,
            trial.state == TrialState.PRUNED,
        )


class Columns(NamedTuple):
    """The finished trials inside the search space, as the engine's :class:`Observations` take
    them: their configurations, values (a number each in a single-objective study, else a list),
    constraint values, learning curves and whether each was pruned."""

    configs: tuple[dict[str, Any], ...] = ()
    values: tuple[Any, ...] = ()
    constraints: tuple[dict[str, float], ...] = ()
    curves: tuple[dict[int, float], ...] = ()
    pruned: tuple[bool, ...] = ()

    @classmethod
    def of(cls, rows: Sequence[Finished], single: bool) -> Columns:
        """The columns of the ``rows`` inside the search space (``single``: one objective)."""
        rows = [r for r in rows if r.config is not None]
        values = (r.values for r in rows)
        return cls(
            tuple(r.config for r in rows),
            tuple(None if v is None else v[0] for v in values) if single else tuple(values),
            tuple(r.constraints for r in rows),
            tuple(r.curve for r in rows),
            tuple(r.pruned for r in rows),
        )

    def extended(self, other: Columns) -> Columns:
        """These columns followed by ``other``'s."""
        return Columns(*(a + b for a, b in zip(self, other, strict=True)))


class FinishedTrials:
    """Each finished trial's :class:`Finished` over one search space, read once per trial: a
    finished trial never changes, so a long study's ask does not read every trial's parameters,
    distributions and attributes again. Where the finished trials begin with the last ask's
    (the same objects: the storages hand out the same finished ``FrozenTrial``), their
    :class:`Columns` are the last ask's extended by the new trials'; otherwise (a running trial
    finished before newer ones, another object) each trial is looked up by identity, and one
    not read before is read. A new search space starts afresh."""

    def __init__(self) -> None:
        # the search space and, over it, each trial by id (the trial itself is held, so its id
        # is not reused), the last ask's trials and their columns; replaced together (threads
        # may ask at once)
        self._known: tuple[dict, dict[int, tuple[FrozenTrial, Finished]], tuple, Columns, bool]
        self._known = ({}, {}, (), Columns(), True)

    def columns(
        self,
        trials: Sequence[FrozenTrial],
        search_space: dict[str, BaseDistribution],
        single: bool = True,
    ) -> Columns:
        """The columns of the finished ``trials`` (in number order) inside ``search_space``
        (``single``: a single-objective study's)."""
        space, known, last, columns, was_single = self._known
        trials = tuple(trials)
        if space != search_space or was_single != single:
            space, known, last, columns = dict(search_space), {}, (), Columns()
        n = len(last)
        if not (n <= len(trials) and all(map(operator.is_, last, trials))):
            n, columns = 0, Columns()
        rows = []
        for t in trials[n:]:
            row = known.get(id(t))
            if row is None or row[0] is not t:
                row = known[id(t)] = (t, Finished.of(t, search_space))
            rows.append(row[1])
        columns = columns.extended(Columns.of(rows, single))
        self._known = (space, known, trials, columns, single)
        return columns


class MixedBOSampler(BaseSampler):
    """Base of mixbo's samplers: a method's validated options run by the shared engine.

    Args (every sampler's):
        seed: Seed of the sampler's own random generator (global RNGs are never touched).
        n_startup_trials: Trials sampled at random before BO starts (running and pruned trials
            count towards them; BO also waits for a first completed trial, or two pruned ones
            that reported intermediate values). Without an
            ``independent_sampler`` the design is uniformly random over the search space and
            never repeats a configuration.
        independent_sampler: Sampler for parameters outside the relative search space (a
            parameter's first trial, a trial whose range changed) and, if given, for the
            start-up trials; by default ``TPESampler(seed=seed)``, which models each such
            parameter on the trials that used it (the start-up design stays uniformly random).
        warn_independent_sampling: Log a warning (once per parameter) when a parameter whose
            distribution changed is sampled independently after the start-up trials.
        pending, penalizer, lipschitz: How running trials count, other threads' and processes'
            included (:class:`common.batch.busy.BusyPolicy`): ``pending="playbook"`` penalises the
            acquisition around them (PLAyBOOK, the default), ``"kriging_believer"`` conditions
            the GP on its mean there, ``"ignore"`` neither; ``penalizer`` is PLAyBOOK's ``"hlp"``
            (hard local, default) or ``"lp"``, ``lipschitz`` its ``"local"`` (per busy point,
            default) or ``"global"`` estimate.
        constraints_func: As Optuna's samplers take it: a function of a finished trial that
            returns its constraint values (feasible when each is ≤ 0), stored with the trial.
            Constraints set in the objective with ``trial.set_constraint(name, value)`` are
            used without it. Every method then weighs its acquisition by the probability of
            feasibility, and the incumbent is the best feasible trial
            (:mod:`common.acquisition.feasibility`).

    Multi-objective studies (``directions=[...]``) are modelled as ParEGO does: each suggestion
    scalarises the objectives with its own random weights and the method runs on that single
    objective (:mod:`common.acquisition.scalarization`); ``study.best_trials`` is the Pareto
    front. Optuna keeps no intermediate values there, so pruned trials are not modelled.
    """

    def __init__(
        self,
        method: MethodOptions,
        *,
        seed: int | None = None,
        n_startup_trials: int = 10,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
    ) -> None:
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise ValueError(
                "independent_sampler must be an optuna sampler (an optuna.samplers.BaseSampler), "
                f"got {independent_sampler!r}."
            )
        busy = BusyPolicy(pending, penalizer, lipschitz)
        self._engine = SuggestionEngine.for_adapter(
            self, method, _logger, seed, n_startup_trials, busy
        )
        self._design_by_engine = independent_sampler is None
        self._independent_sampler = independent_sampler or default_independent_sampler(seed)
        self._warn_independent_sampling = bool(warn_independent_sampling)
        if constraints_func is not None and not callable(constraints_func):
            raise ValueError(f"constraints_func must be callable, got {constraints_func!r}.")
        self._constraints_func = constraints_func
        self._finished = FinishedTrials()
        self._union = UnionSearchSpace()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_finished"] = FinishedTrials()  # a copy reads the trials anew
        state["_union"] = UnionSearchSpace()
        return state

    @property
    def _strategy(self):
        """The method's strategy (built on first use)."""
        return self._engine.strategy

    # ------------------------------------------------------------------ Optuna API
    def reseed_rng(self) -> None:
        self._engine.reseed()
        self._independent_sampler.reseed_rng()

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        """The union of the parameters of the study's completed and running trials, each with its
        latest distribution (a conditional parameter included: the model knows which trials use
        it)."""
        return self._union.of(study.get_trials(deepcopy=False, states=_STATES))

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        trials = study.get_trials(deepcopy=False, states=_STATES)
        others = [t for t in trials if t.number != trial.number]
        finished = {id(t) for t in others if t.state != TrialState.RUNNING}

        def claim(suggestion: Suggestion) -> list[dict[str, Any]]:
            """Store the suggestion with the trial; the configurations other trials have taken."""
            params = {name: suggestion.config[name] for name in search_space}
            _store_relative_params(study, trial, params, search_space)
            if suggestion.fits:
                _store_text(study, trial, _WARM_FITS_KEY, suggestion.fits)
            return self._taken_elsewhere(study, trial, search_space, finished)

        suggestion = self._engine.suggest(
            to_mixed_space(search_space),
            _observations(study, others, search_space, self._finished),
            trial_index=trial.number,
            n_issued=len(others),  # every other completed, pruned or running trial
            design=self._design_by_engine,  # else the user's independent sampler makes it
            study_fits=lambda: _latest_warm_fits(trials),
            claim=claim,
        )
        if suggestion is None:
            return {}
        return {name: suggestion.config[name] for name in search_space}

    @staticmethod
    def _taken_elsewhere(
        study: Study,
        trial: FrozenTrial,
        search_space: dict[str, BaseDistribution],
        finished: set[int],
    ) -> list[dict[str, Any]]:
        """The parameters other trials have taken (completed, or running and known), read after
        ours; the ``finished`` trials (their ids), already among the engine's observations, are
        skipped.

        Two workers that sample at the same moment do not see each other's trial as busy (and the
        model, fitted to the same data, can put both at the same bound). Each re-reads the storage
        after storing its own parameters; a worker that finds its configuration newly taken
        samples again, avoiding it (both may, in which case both do). Whichever of two workers
        stored last sees the other's claim, so a check that passes is never followed by a
        conflicting one that also passes.
        """
        taken = []
        for t in study.get_trials(deepcopy=False, states=_STATES):
            if id(t) in finished or t.number == trial.number:
                continue
            if not fits_space(t, search_space):
                params = None
            elif t.state != TrialState.RUNNING:
                params = _config(t, search_space) or None
            else:
                params = _pending_params(t, search_space)
            if params is not None:
                taken.append(params)
        return taken

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        if (
            self._warn_independent_sampling
            and not param_distribution.single()
            and self._changed_before(study, trial, param_name, param_distribution)
            and self._past_design(study, trial)
        ):
            # A parameter new to the study, or first used by a trial that started after this
            # one's search space was read, is covered by the model from the next trial on; so is
            # one whose distribution changed, but this trial's value cannot come from it.
            name = type(self).__name__
            self._engine.reporter.warn(
                f"The parameter `{param_name}` in trial#{trial.number} is sampled independently "
                f"by using `{type(self._independent_sampler).__name__}` instead of `{name}`: its "
                "distribution differs from the one earlier trials used. From the next trial on "
                "the model covers it over its latest distribution, from the trials whose values "
                "lie inside it. Set `warn_independent_sampling` to `False` in the constructor of "
                f"`{name}` if this is intended.",
                cause=f"independent sampling of {param_name}",
            )
        return self._independent_sampler.sample_independent(
            study, trial, param_name, param_distribution
        )

    @staticmethod
    def _changed_before(
        study: Study, trial: FrozenTrial, param_name: str, dist: BaseDistribution
    ) -> bool:
        """Whether another trial used ``param_name`` with a distribution other than ``dist``."""
        trials = study.get_trials(deepcopy=False, states=_STATES)
        return any(
            t.distributions.get(param_name, dist) != dist
            for t in trials
            if t.number != trial.number
        )

    def _past_design(self, study: Study, trial: FrozenTrial) -> bool:
        """The start-up rule as :meth:`sample_relative` applies it, with the same counts."""
        trials = study.get_trials(deepcopy=False, states=_STATES)
        others = [t for t in trials if t.number != trial.number]
        n_observed = sum(t.state == TrialState.COMPLETE and _has_value(t) for t in others)
        n_pruned = sum(t.state == TrialState.PRUNED and _has_curve(t) for t in others)
        return self._engine.design_done(n_observed, len(others), n_pruned)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._independent_sampler.before_trial(study, trial)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        if self._constraints_func is not None:  # stored exactly as Optuna's own samplers store it
            _process_constraints_after_trial(self._constraints_func, study, trial, state)
        self._independent_sampler.after_trial(study, trial, state, values)


def _observations(
    study: Study,
    others: Sequence[FrozenTrial],
    search_space: dict[str, BaseDistribution],
    known: FinishedTrials | None = None,
) -> Observations:
    """The ``others`` trials over ``search_space``: the finished ones (pruned with their
    intermediate values) as observations, the running ones' parameters as pending; trials
    outside the space's current ranges are left out (:func:`fits_space`). ``known``: the
    finished trials read on earlier asks."""
    done = sorted((t for t in others if t.state != TrialState.RUNNING), key=lambda t: t.number)
    maximize: bool | list[bool] = [d == StudyDirection.MAXIMIZE for d in study.directions]
    single = len(maximize) == 1  # a single objective: its values as numbers
    finished = (known or FinishedTrials()).columns(done, search_space, single)
    pending = [
        p
        for t in others
        if t.state == TrialState.RUNNING
        if (p := _pending_params(t, search_space)) is not None
    ]
    return Observations(
        finished.configs,
        finished.values,  # else one per objective (:mod:`common.acquisition.scalarization`)
        pending,
        maximize=maximize[0] if single else maximize,
        constraints=_constraint_rows(finished.constraints),
        curves=finished.curves,
        pruned=finished.pruned,
    )


def default_independent_sampler(seed: int | None) -> BaseSampler:
    """The sampler of parameters outside the relative search space when the user gives none:
    TPE (Bergstra et al., "Algorithms for Hyper-Parameter Optimization", NeurIPS 2011), which
    models each parameter on the trials that used it, where random sampling would ignore them."""
    return TPESampler(seed=seed)


def _has_curve(trial: FrozenTrial) -> bool:
    return any(math.isfinite(v) for v in trial.intermediate_values.values())


def _has_value(trial: FrozenTrial) -> bool:
    """Whether a trial has its values, each a number (NaN is no value)."""
    return trial.values is not None and all(v == v for v in trial.values)
