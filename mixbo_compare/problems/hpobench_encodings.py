"""HPOLib tables with their numeric columns encoded each way users write them (``hpolib-DATA%ENC``).

The table, its noise and its optimum are :mod:`mixbo_compare.problems.hpobench`'s; only the search
space of the numeric columns (``batch_size``, ``dropout_1/2``, ``init_lr``, ``n_units_1/2``)
changes, so that a sampler can be checked on the spaces users actually write:

- ``index`` (the default): an ordinal ``Integer(0, n - 1)`` named ``<column>_index``, as OptunaHub's
  wrapper and ``hpolib-DATA``;
- ``cat``: a ``Categorical`` of the column's actual values, named ``<column>``;
- ``int``: an ``Integer`` over the actual range for integer columns (``batch_size`` 8..64,
  ``n_units`` 16..512), a ``Float`` for the others (``dropout``, ``init_lr``), as a user writes
  ``suggest_int`` for integers and ``suggest_float`` for the rest;
- ``float``: a ``Float`` over the actual range for every numeric column.

A range is log-scaled where the values are closer to evenly spaced in log than in linear terms
(``batch_size``, ``n_units``, ``init_lr``; not ``dropout`` 0, 0.3, 0.6). The objective snaps each
value to the nearest table value (in log space on a log range), so the sampler sees a plain range,
as ``suggest_int``/``suggest_float`` give, and every table row stays reachable: the optimum is
unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Float, Integer, MixedSpace, Parameter
from mixbo_compare.problems import hpobench
from mixbo_compare.problems.problem import Problem

ENCODINGS = ("index", "cat", "int", "float")


def is_log_spaced(values: Sequence[float]) -> bool:
    """Whether positive ``values`` are more evenly spaced in log than in linear terms (the
    relative spread of consecutive gaps is smaller); ``False`` if any value is ≤ 0."""
    v = np.sort(np.asarray(values, dtype=float))
    if len(v) < 3 or v[0] <= 0:
        return False

    def spread(gaps: np.ndarray) -> float:
        return float(np.std(gaps) / np.mean(gaps))

    return spread(np.diff(np.log(v))) < spread(np.diff(v))


class _Column:
    """One numeric column: its parameter in an encoding, and the snap of a value to its index."""

    def __init__(self, column: str, choices: tuple[Any, ...], encoding: str):
        self.column = column
        self.choices = choices
        values = np.asarray(choices, dtype=float)
        self.log = is_log_spaced(values)
        self.points = np.log(values) if self.log else values
        integral = all(isinstance(c, (int, np.integer)) for c in choices)
        low, high = min(choices), max(choices)
        self.param: Parameter
        if encoding == "cat":
            self.param = Categorical(column, choices)
        elif encoding == "int" and integral:
            self.param = Integer(column, int(low), int(high), log=self.log)
        else:
            self.param = Float(column, float(low), float(high), log=self.log)

    def index(self, value: Any) -> int:
        """Position of the table value nearest ``value`` (in log space on a log range)."""
        x = float(value)
        if self.log:
            x = np.log(max(x, 1e-300))
        return int(np.argmin(np.abs(self.points - x)))


class EncodedObjective:
    """A :class:`hpobench.TabularObjective` read through another encoding; picklable."""

    def __init__(self, objective: hpobench.TabularObjective, encoding: str):
        self.objective = objective
        table = objective.table
        self.columns: dict[str, _Column] = {}
        self.params: list[Parameter] = []
        for j, (column, choices) in enumerate(zip(table.columns, table.choices, strict=True)):
            if table.is_string[j]:
                self.params.append(Categorical(column, choices))
            else:
                self.columns[column] = _Column(column, choices, encoding)
                self.params.append(self.columns[column].param)

    def to_index(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``config`` in :mod:`hpobench`'s index encoding (numeric values snapped)."""
        out = {}
        for name, value in config.items():
            if name in self.columns:
                out[f"{name}_index"] = self.columns[name].index(value)
            else:
                out[name] = value
        return out

    def __call__(self, config: Mapping[str, Any]) -> float:
        return self.objective(self.to_index(config))

    def mean(self, config: Mapping[str, Any]) -> float:
        return self.objective.mean(self.to_index(config))

    def reseed(self, seed: int) -> None:
        self.objective.reseed(seed)


def hpolib_encoded(
    dataset: str, encoding: str = "index", seed: int = 0, *, noisy: bool = True
) -> Problem:
    """HPOLib table ``dataset`` (short names as :func:`hpobench.hpolib`) with its numeric columns
    in ``encoding`` (index, cat, int, float); ``index`` is :func:`hpobench.hpolib` itself."""
    if encoding not in ENCODINGS:
        raise ValueError(
            f"hpolib: unknown encoding {encoding!r}; choose one of {', '.join(ENCODINGS)}."
        )
    if encoding == "index":
        return hpobench.hpolib(dataset, seed, noisy=noisy)
    dataset = hpobench._canonical("hpolib", dataset)
    table = hpobench._load_table("hpolib", dataset)
    objective = EncodedObjective(hpobench.TabularObjective(table, seed, noisy), encoding)
    name = f"hpolib-{hpobench._short('hpolib', dataset)}%{encoding}"
    space = MixedSpace(objective.params)
    best = objective.objective.best_mean
    if not noisy:
        return Problem(name, space, objective, best)
    return Problem(name, space, objective, best, mean=objective.mean, seed_noise=objective.reseed)
