"""The loop both kinds of run share: ask, evaluate and tell every trial of one Optuna study on
simulated workers, recording what :class:`~mixbo_compare.run_result.RunResult` holds of every run.

The single- and multi-objective runs (:func:`mixbo_compare.runner.run`,
:func:`mixbo_compare.multi_objective.run_study`) differ only in how a trial is evaluated and what
is told; each passes that as ``evaluate(i, trial)``, which records its own values and returns the
keyword arguments of ``study.tell`` (``{"values": v}``, or ``{"state": TrialState.PRUNED}``)::

    loop = StudyLoop(study, n_trials, workers, seed, on_trial)
    loop.run(lambda: study.ask(dists), evaluate)
    result = loop.result(values=values, true_values=true_values)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import optuna
from optuna.trial import TrialState

from mixbo_compare.run_result import RunResult
from mixbo_compare.simulated_workers import run_timed


class StudyLoop:
    """One run's study driven on ``workers`` simulated workers (:func:`run_timed` of ``seed``):
    each trial's ask time and parameters, the error of a failed evaluation (the trial is told
    FAIL and the run goes on), the order trials finish; ``on_trial(n_done)`` after each tell."""

    def __init__(
        self,
        study: optuna.Study,
        n_trials: int,
        workers: int,
        seed: int,
        on_trial: Callable[[int], None] | None = None,
    ) -> None:
        self.study, self.n_trials, self.workers, self.seed = study, n_trials, workers, seed
        self.on_trial = on_trial
        self.suggest = np.zeros(n_trials)
        self.params: list[dict[str, Any]] = [{} for _ in range(n_trials)]
        self.errors: list[str | None] = [None] * n_trials
        self.finished: list[int] = []
        self.start_times = self.end_times = np.empty(0)

    def run(
        self,
        ask: Callable[[], optuna.trial.Trial],
        evaluate: Callable[[int, optuna.trial.Trial], dict[str, Any]],
    ) -> None:
        """Every trial: ``ask()`` timed, then at its simulated end ``evaluate(i, trial)`` and the
        tell it returns; an exception from ``evaluate`` is the trial's error (told FAIL), one
        from the sampler propagates."""

        def start(i: int) -> tuple[int, optuna.trial.Trial]:
            begin = time.perf_counter()
            trial = ask()
            self.suggest[i] = time.perf_counter() - begin
            self.params[i] = dict(trial.params)
            return i, trial

        def end(handle: tuple[int, optuna.trial.Trial]) -> None:
            i, trial = handle
            try:
                told = evaluate(i, trial)
            except Exception as exc:  # a failed evaluation is a FAILed trial, not a failed run
                self.errors[i] = f"{type(exc).__name__}: {exc}"
                told = {"state": TrialState.FAIL}
            self.study.tell(trial, **told)
            self.finished.append(i)
            if self.on_trial is not None:
                self.on_trial(len(self.finished))

        self.start_times, self.end_times = run_timed(
            start, end, self.n_trials, self.workers, self.seed
        )

    def result(self, **fields: Any) -> RunResult:
        """The run's :class:`RunResult`: what this loop recorded and the caller's ``fields``."""
        return RunResult(
            seconds_per_suggestion=float(self.suggest.mean()) if self.n_trials else 0.0,
            start_times=self.start_times,
            end_times=self.end_times,
            finish_order=np.asarray(self.finished, dtype=int),
            suggest_seconds=self.suggest,
            params=self.params,
            errors=self.errors,
            workers=self.workers,
            **fields,
        )
