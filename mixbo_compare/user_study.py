"""One study of a user's own objective (:mod:`mixbo_compare.problems.user_objective`).

The counterpart of :func:`mixbo_compare.runner.run` for an objective that suggests its own
parameters: the same simulated workers, seeding and failure handling, and the same
:class:`~mixbo_compare.run_result.RunResult`. What differs follows from define-by-run:

- the objective runs when its trial starts (``study.ask()`` then ``objective(trial)``), so a
  worker's trial is suggested seeing the trials then running, as in a real parallel study; its
  value is told when the simulated runtime ends;
- the seconds a suggestion took are those spent in the sampler (``TimedSampler``), since the
  sampler is asked again inside each ``trial.suggest_*``;
- values are stored minimised (a maximised objective negated), so the report's curves and ranks
  are the same code as for the built-in problems; the report turns them back;
- a peer (CatCMA with Margin, SMAC3, Ax) needs its space before its first proposal: it learns it
  from the study's first completed trial, which it samples at random (``DeferredPeer``).
"""

from __future__ import annotations

import abc
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.trial import FrozenTrial, TrialState

from mixbo_compare.peers import PEERS
from mixbo_compare.problems.user_objective import ObjectiveError, UserObjective
from mixbo_compare.pruners import make_pruner
from mixbo_compare.run_result import RunResult
from mixbo_compare.runner import SAMPLERS
from mixbo_compare.study_loop import StudyLoop

# a run stops when each of its first trials raised: the objective is broken, not one configuration
FAILED_START = 5


class Delegating(optuna.samplers.BaseSampler):
    """A sampler that hands every call of Optuna's sampler interface to ``inner()`` through
    ``call``: the one place a wrapper below changes what a call does."""

    @abc.abstractmethod
    def inner(self) -> optuna.samplers.BaseSampler:
        """The sampler each call goes to now."""

    def call(self, method: str, *args: Any) -> Any:
        return getattr(self.inner(), method)(*args)

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return self.call("infer_relative_search_space", study, trial)

    def sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        return self.call("sample_relative", study, trial, search_space)

    def sample_independent(
        self, study: optuna.Study, trial: FrozenTrial, name: str, dist: BaseDistribution
    ) -> Any:
        return self.call("sample_independent", study, trial, name, dist)

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self.call("before_trial", study, trial)

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        self.call("after_trial", study, trial, state, values)

    def reseed_rng(self) -> None:
        self.inner().reseed_rng()


class TimedSampler(Delegating):
    """``sampler`` with the wall-clock seconds spent in it added up in ``seconds``."""

    def __init__(self, sampler: optuna.samplers.BaseSampler) -> None:
        self.sampler = sampler
        self.seconds = 0.0

    def inner(self) -> optuna.samplers.BaseSampler:
        return self.sampler

    def call(self, method: str, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return super().call(method, *args)
        finally:
            self.seconds += time.perf_counter() - start


class DeferredPeer(Delegating):
    """A peer whose space is the first completed trial's: random until then, the peer (built for
    the rest of the budget) from then on; parameters outside that space stay random."""

    def __init__(self, name: str, seed: int, n_trials: int) -> None:
        self.name, self.seed, self.n_trials = name, seed, n_trials
        self.random = optuna.samplers.RandomSampler(seed=seed)
        self.peer: optuna.samplers.BaseSampler | None = None

    def inner(self) -> optuna.samplers.BaseSampler:
        return self.peer if self.peer is not None else self.random

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        super().after_trial(study, trial, state, values)
        if self.peer is None and state == TrialState.COMPLETE and trial.distributions:
            left = max(self.n_trials - trial.number - 1, 1)
            self.peer = PEERS[self.name].build(self.seed, trial.distributions, left)


def sampler_for(name: str, seed: int, n_trials: int) -> optuna.samplers.BaseSampler:
    """The sampler ``name`` of ``mixbo-compare -s`` for a define-by-run study."""
    if name in PEERS:
        return DeferredPeer(name, seed, n_trials)
    return SAMPLERS[name](seed)


def _values(returned: Any, n: int) -> list[float]:
    """The objective's return value as ``n`` floats, or :class:`ObjectiveError` for a wrong
    count (the whole run is wrong, not one trial)."""
    if isinstance(returned, (int, float, np.floating, np.integer)):
        values = [float(returned)]
    elif isinstance(returned, (Sequence, np.ndarray)) and not isinstance(returned, str):
        values = [float(v) for v in returned]
    else:
        raise ValueError(f"the objective returned {returned!r}, not a number")
    if len(values) != n:
        raise ObjectiveError(
            f"the objective returned {len(values)} value(s) but --directions names {n}; give "
            "one direction per returned value"
        )
    return values


def run_user_objective(
    user: UserObjective,
    sampler: str | optuna.samplers.BaseSampler,
    seed: int,
    n_trials: int,
    *,
    workers: int = 1,
    on_trial: Callable[[int], None] | None = None,
    pruner: str = "none",
) -> RunResult:
    """``n_trials`` trials of ``user``'s objective with ``sampler`` on ``workers`` simulated
    workers, under ``pruner`` (:data:`mixbo_compare.pruners.PRUNERS`; one objective only).

    A trial whose objective raises or returns a non-finite value is FAILed and the run goes on;
    the run itself fails (raises :class:`ObjectiveError`) when the objective returns the wrong
    number of values, when each of its first :data:`FAILED_START` trials raised, or when no trial
    succeeded. A trial that sets a constraint above 0 is infeasible: it never counts as the best.
    """
    m = user.n_objectives
    if pruner != "none" and m > 1:
        raise ObjectiveError("--pruner needs one objective: Optuna prunes single-objective studies")
    chosen = sampler_for(sampler, seed, n_trials) if isinstance(sampler, str) else sampler
    timed = TimedSampler(chosen)
    study = optuna.create_study(  # HyperbandPruner picks brackets by hashing the study's name
        sampler=timed,
        directions=user.directions,
        pruner=_pruner(pruner),
        study_name=f"mixbo-compare-seed-{seed}",
    )
    signs = np.array([-1.0 if d == "maximize" else 1.0 for d in user.directions])
    outcome: list[tuple[str, Any]] = [("", None)] * n_trials
    spent = np.zeros(n_trials)
    loop = StudyLoop(study, n_trials, workers, seed, on_trial)
    asked = [0]

    def ask() -> optuna.trial.Trial:
        i = asked[0]  # trials are asked in order: the i-th ask is trial number i
        asked[0] += 1
        before = timed.seconds
        trial = study.ask()
        try:
            outcome[i] = ("ok", _values(user.objective(trial), m))
        except optuna.TrialPruned:
            outcome[i] = ("pruned", None)
        except ObjectiveError:
            raise
        except Exception as exc:  # this configuration failed: a FAILed trial
            outcome[i] = ("error", exc)
        spent[i] = timed.seconds - before
        _stop_if_broken(outcome, i)
        return trial

    def evaluate(i: int, trial: optuna.trial.Trial) -> dict[str, Any]:
        kind, got = outcome[i]
        if kind == "error":
            raise got
        if kind == "pruned":
            return {"state": TrialState.PRUNED}
        if not all(math.isfinite(v) for v in got):
            raise ValueError(f"objective returned {got}")
        return {"values": got}

    loop.run(ask, evaluate)
    loop.suggest[:] = spent
    return _result(loop, study, signs, n_trials)


def _pruner(name: str) -> optuna.pruners.BasePruner:
    if name == "hyperband":  # a user's steps are unknown: Optuna's own estimate
        return optuna.pruners.HyperbandPruner(min_resource=1, reduction_factor=3)
    return make_pruner(name, None)  # type: ignore[arg-type]  # median and none need no problem


def _stop_if_broken(outcome: list[tuple[str, Any]], i: int) -> None:
    first = outcome[: min(FAILED_START, len(outcome))]
    if i == len(first) - 1 and all(kind == "error" for kind, _ in first):
        error = first[0][1]
        raise ObjectiveError(
            f"the objective raised on each of the first {len(first)} trials: "
            f"{type(error).__name__}: {' '.join(str(error).split())}"
        )


def _result(loop: StudyLoop, study: optuna.Study, signs: np.ndarray, n_trials: int) -> RunResult:
    m = len(signs)
    values = np.full(n_trials, np.nan)
    objectives = np.full((n_trials, m), np.nan)
    feasible = np.zeros(n_trials, dtype=bool)
    steps = np.zeros(n_trials, dtype=int)
    pruned = np.zeros(n_trials, dtype=bool)
    for t in study.get_trials(deepcopy=False):
        i = t.number
        steps[i] = len(t.intermediate_values)
        pruned[i] = t.state == TrialState.PRUNED
        if t.state != TrialState.COMPLETE:
            continue
        feasible[i] = all(c <= 0 for c in t.constraints.values())
        objectives[i] = signs * np.asarray(t.values, dtype=float)
        values[i] = objectives[i, 0] if m == 1 else math.nan
    if not np.isfinite(objectives).all(axis=1).any():
        errors = [e for e in loop.errors if e]
        raise ObjectiveError(
            "no trial succeeded"
            + (f"; the objective raised {errors[0]}" if errors else "")
            + (" (every trial was pruned)" if pruned.all() else "")
        )
    true_values = np.where(feasible, values, np.where(np.isnan(values), np.nan, math.inf))
    if m == 1:
        return loop.result(values=values, true_values=true_values, steps=steps, pruned=pruned)
    return loop.result(
        values=np.full(n_trials, np.nan),
        true_values=np.full(n_trials, np.nan),
        steps=steps,
        pruned=pruned,
        objectives=objectives,
        true_objectives=objectives.copy(),
        feasible=feasible,
    )
