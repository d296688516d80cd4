"""Synthetic mixed-variable benchmarks from the CoCaBO, CASMOPOLITAN and BO-FM papers.

- Func2C and Func3C (CoCaBO, Ru et al. 2020; Func3C in the CoCaBO/BO-FM form with 3, 5 and 4
  categories): a scaled Rosenbrock, six-hump camel or Beale function per categorical value, summed.
- Ackley5C (CoCaBO): 5 categoricals with 17 choices on an Ackley grid plus one continuous input.
- Ackley-53 (MVRSM, used by CASMOPOLITAN and MCBO): 50 binary plus 3 continuous Ackley inputs.

All minimise and are noise-free. The ``*_array`` functions are vectorised over rows; each problem's
``function`` evaluates one config dict through them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Float, MixedSpace
from mixbo_compare.problems.problem import Problem

FUNC2C_OPTIMUM = -0.2063257
FUNC3C_OPTIMUM = -0.7221399


# ---------------------------------------------------------------- building blocks
def rosenbrock(z: np.ndarray) -> np.ndarray:
    """Scaled Rosenbrock R(z) on rows of ``z`` (shape ``(n, 2)``); minimum 0 at (1, 1)."""
    z1, z2 = z[:, 0], z[:, 1]
    return (100.0 * (z2 - z1**2) ** 2 + (z1 - 1.0) ** 2) / 300.0


def six_hump_camel(z: np.ndarray) -> np.ndarray:
    """Scaled six-hump camel S(z); minimum -0.10316285 at ±(0.0898, -0.7126)."""
    z1, z2 = z[:, 0], z[:, 1]
    camel = (4.0 - 2.1 * z1**2 + z1**4 / 3.0) * z1**2 + z1 * z2 + (-4.0 + 4.0 * z2**2) * z2**2
    return camel / 10.0


def beale(z: np.ndarray) -> np.ndarray:
    """Scaled Beale B(z)."""
    z1, z2 = z[:, 0], z[:, 1]
    terms = (1.5 - z1 + z1 * z2) ** 2 + (2.25 - z1 + z1 * z2**2) ** 2
    return (terms + (2.625 - z1 + z1 * z2**3) ** 2) / 50.0


def _blocks(c: np.ndarray) -> np.ndarray:
    """R, S and B at z = 2c as columns of an ``(n, 3)`` array."""
    z = 2.0 * np.asarray(c, dtype=float).reshape(-1, 2)
    return np.stack([rosenbrock(z), six_hump_camel(z), beale(z)], axis=1)


# Per categorical: weights on (R, S, B) for each category value.
_T1 = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
_T2 = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1], [0, 0, 1]], dtype=float)
_T3 = np.array([[0, 5, 0], [2, 0, 0], [0, 0, 2], [0, 0, 3]], dtype=float)


def func2c_array(h: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Func2C on rows: ``h`` is ``(n, 2)`` category indices, ``c`` is ``(n, 2)`` in [-1, 1]."""
    h = np.asarray(h, dtype=int).reshape(-1, 2)
    weights = _T1[h[:, 0]] + _T2[h[:, 1]]
    return np.sum(weights * _blocks(c), axis=1)


def func3c_array(h: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Func3C (CoCaBO/BO-FM version) on rows: ``h`` is ``(n, 3)``, ``c`` is ``(n, 2)``."""
    h = np.asarray(h, dtype=int).reshape(-1, 3)
    weights = _T1[h[:, 0]] + _T2[h[:, 1]] + _T3[h[:, 2]]
    return np.sum(weights * _blocks(c), axis=1)


def ackley_array(z: np.ndarray) -> np.ndarray:
    """Standard Ackley (a=20, b=0.2, c=2π) on rows of ``z``, means over all columns; min 0 at 0."""
    z = np.asarray(z, dtype=float)
    term1 = -20.0 * np.exp(-0.2 * np.sqrt(np.mean(z**2, axis=1)))
    term2 = -np.exp(np.mean(np.cos(2.0 * np.pi * z), axis=1))
    return term1 + term2 + 20.0 + np.e


def ackley5c_array(h: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Ackley5C on rows: ``h`` is ``(n, 5)`` in 0..16 (mapped to 0.125 h - 1), ``c`` ``(n, 1)``."""
    v = 0.125 * np.asarray(h, dtype=float).reshape(-1, 5) - 1.0
    return ackley_array(np.concatenate([np.asarray(c, dtype=float).reshape(-1, 1), v], axis=1))


def ackley53_array(b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Ackley-53 on rows: ``b`` is ``(n, 50)`` binaries, ``c`` is ``(n, 3)`` in [-1, 1]."""
    b = np.asarray(b, dtype=float).reshape(-1, 50)
    return ackley_array(np.concatenate([b, np.asarray(c, dtype=float).reshape(-1, 3)], axis=1))


# ---------------------------------------------------------------- problems
def _names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(1, n + 1)]


def _space(n_choices: Sequence[int], n_cont: int) -> MixedSpace:
    cats = [Categorical(f"h{i}", tuple(range(k))) for i, k in enumerate(n_choices, start=1)]
    conts = [Float(name, -1.0, 1.0) for name in _names("x", n_cont)]
    return MixedSpace([*cats, *conts])


def _split(config: Mapping[str, Any], n_cat: int, n_cont: int) -> tuple[np.ndarray, np.ndarray]:
    h = np.array([[int(config[n]) for n in _names("h", n_cat)]])
    c = np.array([[float(config[n]) for n in _names("x", n_cont)]])
    return h, c


def func2c() -> Problem:
    """Func2C (CoCaBO): h1 ∈ {0,1,2}, h2 ∈ {0..4}, x1, x2 ∈ [-1, 1]; f* = -0.2063257."""

    def function(config: Mapping[str, Any]) -> float:
        return float(func2c_array(*_split(config, 2, 2))[0])

    return Problem("func2c", _space((3, 5), 2), function, FUNC2C_OPTIMUM)


def func3c() -> Problem:
    """Func3C (CoCaBO/BO-FM version): categories (3, 5, 4), x1, x2 ∈ [-1, 1]; f* = -0.7221399."""

    def function(config: Mapping[str, Any]) -> float:
        return float(func3c_array(*_split(config, 3, 2))[0])

    return Problem("func3c", _space((3, 5, 4), 2), function, FUNC3C_OPTIMUM)


def ackley5c() -> Problem:
    """Ackley5C (CoCaBO): h1..h5 ∈ {0..16} (nominal), x1 ∈ [-1, 1]; f* = 0 at h = 8, x = 0."""

    def function(config: Mapping[str, Any]) -> float:
        return float(ackley5c_array(*_split(config, 5, 1))[0])

    return Problem("ackley5c", _space((17,) * 5, 1), function, 0.0)


def ackley53() -> Problem:
    """Ackley-53 (MVRSM/CASMOPOLITAN): h1..h50 ∈ {0, 1}, x1..x3 ∈ [-1, 1]; f* = 0 at all zeros."""

    def function(config: Mapping[str, Any]) -> float:
        return float(ackley53_array(*_split(config, 50, 3))[0])

    return Problem("ackley53", _space((2,) * 50, 3), function, 0.0)
