"""The mixed search space: float, integer and categorical parameters, encoded as arrays.

Encoding (one row per configuration, one column per *modelled* parameter, in parameter order):

- ``Float`` and ``Integer``: a continuous coordinate in [0, 1]. Log parameters are warped first;
  stepped floats and integers are padded by half a step on each side (as Optuna's GPSampler does)
  so that every grid value owns an equal share of [0, 1]; decoding rounds to the grid.
- ``Categorical``: the index of the choice, stored as a float.

Parameters with a single possible value are not modelled: they take no column and decode to that
value. A space may carry :mod:`common.space.conditions`'s conditions: a configuration may then lack
a conditional parameter, and every encoding is *canonical* (inactive parameters at their imputed
value). This module needs only numpy, so importing it is cheap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from common.space.conditions import Condition, active_mask, impute_row


@dataclass(frozen=True)
class Float:
    """A real parameter in [low, high], optionally log-scaled or on a grid of ``step``."""

    name: str
    low: float
    high: float
    log: bool = False
    step: float | None = None

    def __post_init__(self) -> None:
        if not self.low <= self.high:
            raise ValueError(f"{self.name}: low={self.low} must not exceed high={self.high}.")
        if self.log and self.step is not None:
            raise ValueError(
                f"{self.name}: a float parameter cannot be both log-scaled and stepped."
            )
        if self.log and self.low <= 0:
            raise ValueError(f"{self.name}: a log-scaled parameter needs low > 0, got {self.low}.")
        if self.step is not None and self.step <= 0:
            raise ValueError(f"{self.name}: step must be positive, got {self.step}.")


@dataclass(frozen=True)
class Integer:
    """An integer parameter in [low, high] on a grid of ``step``, optionally log-scaled."""

    name: str
    low: int
    high: int
    log: bool = False
    step: int = 1

    def __post_init__(self) -> None:
        if not self.low <= self.high:
            raise ValueError(f"{self.name}: low={self.low} must not exceed high={self.high}.")
        if self.step < 1:
            raise ValueError(f"{self.name}: step must be a positive integer, got {self.step}.")
        if self.log and (self.low < 1 or self.step != 1):
            raise ValueError(f"{self.name}: a log-scaled integer needs low >= 1 and step == 1.")

    @property
    def n_values(self) -> int:
        return (self.high - self.low) // self.step + 1


@dataclass(frozen=True)
class Categorical:
    """A nominal parameter over arbitrary choice objects (hashable or not, of mixed types)."""

    name: str
    choices: tuple[Any, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "choices", tuple(self.choices))
        if not self.choices:
            raise ValueError(f"{self.name}: a categorical parameter needs at least one choice.")

    def index(self, value: Any) -> int:
        """Position of ``value`` among the choices: identity first, then equality of the same type.

        Type-aware equality keeps ``True``, ``1`` and ``1.0`` apart, and NaN matches NaN.
        """
        for i, choice in enumerate(self.choices):
            if choice is value:
                return i
        for i, choice in enumerate(self.choices):
            if type(choice) is type(value) and _equal(choice, value):
                return i
        raise ValueError(f"{self.name}: {value!r} is not one of the choices {self.choices!r}.")


Parameter = Float | Integer | Categorical


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:  # e.g. numpy arrays compare element-wise
        return False


def _is_single(p: Parameter) -> bool:
    if isinstance(p, Categorical):
        return len(p.choices) == 1
    if isinstance(p, Integer):
        return p.n_values == 1
    if p.step is not None:
        return p.high - p.low < p.step
    return p.low == p.high


class MixedSpace:
    """An ordered tuple of parameters with vectorised encode/decode to model arrays."""

    def __init__(self, params: Sequence[Parameter], conditions: Sequence[Condition] = ()):
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ValueError(f"parameter names must be unique, got {names}.")
        self.params: tuple[Parameter, ...] = tuple(params)
        self.modelled: tuple[Parameter, ...] = tuple(p for p in self.params if not _is_single(p))
        self.fixed: dict[str, Any] = {
            p.name: _single_value(p) for p in self.params if _is_single(p)
        }
        kinds = [isinstance(p, Categorical) for p in self.modelled]
        self.cont_dims: tuple[int, ...] = tuple(i for i, c in enumerate(kinds) if not c)
        self.cat_dims: tuple[int, ...] = tuple(i for i, c in enumerate(kinds) if c)
        # Per-column arrays for vectorised transforms of the continuous columns.
        lo, hi, log, step, is_int = [], [], [], [], []
        for p in self.modelled:
            if isinstance(p, Categorical):
                lo.append(0.0)
                hi.append(1.0)
                log.append(False)
                step.append(0.0)
                is_int.append(False)
                continue
            grid = p.step if (isinstance(p, Integer) or p.step is not None) else 0.0
            low, high = float(p.low), float(p.high)
            if grid:
                high = low + grid * math.floor((high - low) / grid + 1e-9)
            lo.append(low)
            hi.append(high)
            log.append(p.log)
            step.append(float(grid))
            is_int.append(isinstance(p, Integer))
        self._low = np.asarray(lo, dtype=float)
        self._high = np.asarray(hi, dtype=float)
        self._log = np.asarray(log, dtype=bool)
        self._step = np.asarray(step, dtype=float)
        self._is_int = np.asarray(is_int, dtype=bool)
        pad = np.where(self._step > 0, self._step / 2, 0.0)
        wlo = np.where(self._log, np.log(np.maximum(self._low - pad, 1e-300)), self._low - pad)
        whi = np.where(self._log, np.log(np.maximum(self._high + pad, 1e-300)), self._high + pad)
        self._wlow, self._whigh = wlo, whi
        self.conditions: tuple[Condition, ...] = tuple(conditions)
        self.optional = frozenset(name for c in self.conditions for name in c.params)
        unknown = self.optional - {p.name for p in self.modelled}
        if unknown:
            raise ValueError(
                f"conditions name parameters that are not modelled: {sorted(unknown)}."
            )

    def with_conditions(self, conditions: Sequence[Condition]) -> MixedSpace:
        """The same parameters under ``conditions`` (see :mod:`common.space.conditions`)."""
        return MixedSpace(self.params, conditions)

    # ------------------------------------------------------------------ description
    @property
    def dim(self) -> int:
        """Number of modelled columns."""
        return len(self.modelled)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def n_choices(self) -> tuple[int, ...]:
        """Number of choices of each categorical column, in ``cat_dims`` order."""
        return tuple(len(self.modelled[i].choices) for i in self.cat_dims)  # type: ignore[union-attr]

    @property
    def float_dims(self) -> tuple[int, ...]:
        """The numeric columns that take any value of their range: neither integers nor on a
        grid (``step``)."""
        return tuple(j for j in self.cont_dims if not self._is_int[j] and self._step[j] == 0)

    @property
    def snap(self) -> Callable[[np.ndarray], np.ndarray] | None:
        """:meth:`round` where a numeric column takes discrete values (an integer, a stepped
        float), so that a relaxed optimum can be put on the grid; ``None`` where none does."""
        cont = list(self.cont_dims)
        gridded = bool(cont) and bool((self._is_int[cont] | (self._step[cont] > 0)).any())
        return self.round if gridded else None

    def __len__(self) -> int:
        return len(self.params)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MixedSpace) and self.params == other.params

    def __hash__(self) -> int:
        return hash(tuple(p.name for p in self.params))

    def __repr__(self) -> str:
        return f"MixedSpace({list(self.params)!r})"

    # ------------------------------------------------------------------ encode / decode
    def encode(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Configs (dicts of plain values) to an ``(n, dim)`` float array.

        A conditional parameter a config lacks takes its imputed value; rows are canonical.
        """
        out = np.empty((len(configs), self.dim), dtype=float)
        missing = np.zeros(out.shape, dtype=bool)
        for j, p in enumerate(self.modelled):
            optional = p.name in self.optional
            if isinstance(p, Categorical):
                column = [
                    p.index(c[p.name]) if not optional or p.name in c else np.nan for c in configs
                ]
            else:
                column = [
                    float(c[p.name]) if not optional or p.name in c else np.nan for c in configs
                ]
            out[:, j] = column
            missing[:, j] = np.isnan(out[:, j]) if optional else False
        cont = np.asarray(self.cont_dims, dtype=int)
        if cont.size:
            v = out[:, cont]
            v = np.where(self._log[cont], np.log(np.maximum(v, 1e-300)), v)
            out[:, cont] = (v - self._wlow[cont]) / (self._whigh[cont] - self._wlow[cont])
        if self.conditions:
            out = np.where(missing, self.impute_row, out)
            return self.canonical(out)
        return out

    # ------------------------------------------------------------------ conditions
    @property
    def impute_row(self) -> np.ndarray:
        """The encoded value of each column when its parameter is inactive."""
        return impute_row(self)

    def active_mask(self, X: np.ndarray) -> np.ndarray:
        """Which entries of the encoded rows ``X`` are used (all, without conditions)."""
        return active_mask(self, X)

    def canonical(self, X: np.ndarray) -> np.ndarray:
        """``X`` with every inactive entry at its imputed value (a copy)."""
        X = np.array(X, dtype=float, copy=True).reshape(-1, self.dim)
        if not self.conditions:
            return X
        return np.where(self.active_mask(X), X, self.impute_row)

    def column_values(self, X: np.ndarray, j: int) -> np.ndarray:
        """Column ``j`` of encoded rows as values: category indices or (snapped) numbers."""
        X = np.asarray(X, dtype=float).reshape(-1, self.dim)
        p = self.modelled[j]
        if isinstance(p, Categorical):
            return np.clip(np.round(X[:, j]), 0, len(p.choices) - 1)
        return self._to_values(X[:, [j]], np.array([j]))[:, 0]

    def grid_neighbours(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The encoded positions, ``(n, len(cont_dims))``, of each numeric column's value one grid
        step below and above that of the rows ``X`` (clipped to the bounds; a free float keeps
        its own position)."""
        cont = np.asarray(self.cont_dims, dtype=int)
        here = np.asarray(X, dtype=float).reshape(-1, self.dim)[:, cont]
        values = self._to_values(here, cont)
        step, low, high = self._step[cont], self._low[cont], self._high[cont]
        below = self._from_values(np.clip(values - step, low, high), cont)
        above = self._from_values(np.clip(values + step, low, high), cont)
        gridded = step > 0
        return np.where(gridded, below, here), np.where(gridded, above, here)

    def round(self, X: np.ndarray) -> np.ndarray:
        """Snap encoded rows onto the space: clip to [0,1], snap grids, round category indices."""
        X = np.array(X, dtype=float, copy=True).reshape(-1, self.dim)
        cont = np.asarray(self.cont_dims, dtype=int)
        if cont.size:
            values = self._to_values(X[:, cont], cont)
            X[:, cont] = self._from_values(values, cont)
        for j, n in zip(self.cat_dims, self.n_choices, strict=True):
            X[:, j] = np.clip(np.round(X[:, j]), 0, n - 1)
        return self.canonical(X) if self.conditions else X

    def decode(self, X: np.ndarray) -> list[dict[str, Any]]:
        """An ``(n, dim)`` array to configs of plain Python values inside bounds and on grids."""
        X = np.asarray(X, dtype=float).reshape(-1, self.dim)
        cont = np.asarray(self.cont_dims, dtype=int)
        values = self._to_values(X[:, cont], cont) if cont.size else np.empty((len(X), 0))
        columns: dict[int, list[Any]] = {}
        for k, j in enumerate(self.cont_dims):
            col = values[:, k]
            columns[j] = [int(v) for v in col] if self._is_int[j] else [float(v) for v in col]
        for j, n in zip(self.cat_dims, self.n_choices, strict=True):
            idx = np.clip(np.round(X[:, j]), 0, n - 1).astype(int)
            choices = self.modelled[j].choices  # type: ignore[union-attr]
            columns[j] = [choices[i] for i in idx]
        configs = []
        for r in range(len(X)):
            config: dict[str, Any] = {}
            for p in self.params:
                if p.name in self.fixed:
                    config[p.name] = self.fixed[p.name]
            for j, p in enumerate(self.modelled):
                config[p.name] = columns[j][r]
            configs.append({name: config[name] for name in self.names})
        return configs

    def _to_values(self, U: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Unit-cube columns to parameter values (clipped, snapped to grids, rounded for ints)."""
        U = np.clip(U, 0.0, 1.0)
        w = self._wlow[cols] + U * (self._whigh[cols] - self._wlow[cols])
        v = np.where(self._log[cols], np.exp(np.where(self._log[cols], w, 0.0)), w)
        step, low, high = self._step[cols], self._low[cols], self._high[cols]
        gridded = step > 0
        safe_step = np.where(gridded, step, 1.0)
        snapped = low + np.round((v - low) / safe_step) * safe_step
        v = np.where(gridded, snapped, v)
        v = np.clip(v, low, high)
        return np.where(self._is_int[cols], np.round(v), v)

    def _from_values(self, V: np.ndarray, cols: np.ndarray) -> np.ndarray:
        w = np.where(self._log[cols], np.log(np.maximum(V, 1e-300)), V)
        return (w - self._wlow[cols]) / (self._whigh[cols] - self._wlow[cols])

    # ------------------------------------------------------------------ sampling
    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` uniformly random encoded rows, already on the space's grids."""
        X = rng.random((n, self.dim))
        for j, k in zip(self.cat_dims, self.n_choices, strict=True):
            X[:, j] = rng.integers(0, k, size=n)
        return self.round(X)

    def all_rows(self, limit: int) -> np.ndarray | None:
        """Every encoded row of a discrete space (categories, integers, stepped floats), or
        ``None`` if a float is free or there are more than ``limit`` rows."""
        columns = []
        for j, p in enumerate(self.modelled):
            if isinstance(p, Categorical):
                columns.append(np.arange(len(p.choices), dtype=float))
            elif self._step[j] > 0:
                n = int(round((self._high[j] - self._low[j]) / self._step[j])) + 1
                values = self._low[j] + self._step[j] * np.arange(n)
                columns.append(self._from_values(values[:, None], np.array([j]))[:, 0])
            else:
                return None
        if math.prod(len(c) for c in columns) > limit:
            return None
        grids = np.meshgrid(*columns, indexing="ij") if columns else []
        return np.stack([g.reshape(-1) for g in grids], axis=-1).reshape(-1, self.dim)


def _single_value(p: Parameter) -> Any:
    if isinstance(p, Categorical):
        return p.choices[0]
    if isinstance(p, Integer):
        return int(p.low)
    return float(p.low)
