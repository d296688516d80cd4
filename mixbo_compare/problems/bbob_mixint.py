"""COCO ``bbob-mixint`` problems (integer + continuous), wrapped as framework-free problems.

Source: the COCO platform's mixed-integer suite, PyPI ``coco-experiment`` (import ``cocoex``).
Layout of a problem of dimension d: the first 4d/5 variables are integers in four equal blocks
with ranges [0, 1], [0, 3], [0, 7], [0, 15]; the last d/5 are continuous in [-5, 5]. Parameters are
named ``x0 .. x{d-1}`` (the same names and types as OptunaHub's ``bbob_mixint`` package).

COCO evaluates points outside the box without complaint and rounds non-integer values itself, so
the objective here clips every coordinate to its bounds and rounds integer coordinates (half up, as
COCO does) before calling COCO. The optimum ``f_opt`` comes from COCO's ``_best_parameter("print")``
(written to a file in a temporary directory, then evaluated); it is the mixed-integer optimum.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Float, Integer, MixedSpace, Parameter
from mixbo_compare.problems.problem import Problem

_INSTALL_HINT = "bbob-mixint problems need coco-experiment: pip install 'mixbo[benchmarks]'"

# (function, dimension, instance) -> (f_opt, x_best); filled on first use.
_OPTIMA: dict[tuple[int, int, int], tuple[float, np.ndarray]] = {}
# ``_best_parameter`` writes into the current directory, so the chdir into a temporary directory
# is serialised within this process.
_CWD_LOCK = threading.Lock()
_BEST_FILE = "._bbob_problem_best_parameter.txt"


def _import_cocoex() -> Any:
    try:
        import cocoex
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    return cocoex


def best_parameters(problem: Any, best_file: str) -> np.ndarray:
    """The optimum or optima COCO's ``_best_parameter("print")`` writes for ``problem`` (into
    ``best_file`` of the current directory, so the call runs in a temporary one), one per row."""
    with _CWD_LOCK, tempfile.TemporaryDirectory(prefix="mixbo-coco-") as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            problem._best_parameter("print")
            return np.atleast_2d(np.loadtxt(best_file))
        finally:
            os.chdir(cwd)


class CocoObjective:
    """One problem of a COCO mixed-integer suite (``SUITE``) as a callable on configurations
    ``x0 .. x{d-1}``; picklable (COCO is rebuilt on unpickling)."""

    SUITE = "bbob-mixint"

    def __init__(self, function: int, dimension: int, instance: int):
        self.function = function
        self.dimension = dimension
        self.instance = instance
        self._connect()

    def _connect(self) -> None:
        cocoex = _import_cocoex()
        self._suite = cocoex.Suite(  # kept alive beside its problem
            self.SUITE,
            "",
            f"function_indices:{self.function} dimensions:{self.dimension} "
            f"instance_indices:{self.instance}",
        )
        self._problem = self._suite.get_problem_by_function_dimension_instance(
            self.function, self.dimension, self.instance
        )
        self.lower = np.asarray(self._problem.lower_bounds, dtype=float)
        self.upper = np.asarray(self._problem.upper_bounds, dtype=float)
        self.n_int = int(self._problem.number_of_integer_variables)
        self.names = tuple(f"x{i}" for i in range(self.dimension))

    def __getstate__(self) -> dict[str, Any]:
        return {"function": self.function, "dimension": self.dimension, "instance": self.instance}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._connect()

    def to_vector(self, config: Mapping[str, Any]) -> np.ndarray:
        """The point COCO sees: clipped to the box, integer coordinates rounded half up."""
        x = np.array([float(config[name]) for name in self.names])
        x[: self.n_int] = np.floor(x[: self.n_int] + 0.5)
        return np.clip(x, self.lower, self.upper)

    def space(self) -> MixedSpace:
        """The problem's variables: integers first (COCO's ranges), then the continuous ones."""
        params: list[Parameter] = []
        for i, (lo, hi) in enumerate(zip(self.lower, self.upper, strict=True)):
            if i < self.n_int:
                params.append(Integer(f"x{i}", int(lo), int(hi)))
            else:
                params.append(Float(f"x{i}", float(lo), float(hi)))
        return MixedSpace(params)


class BBOBMixintObjective(CocoObjective):
    """Callable ``config -> f(x)`` for one bbob-mixint problem."""

    def __call__(self, config: Mapping[str, Any]) -> float:
        return float(self._problem(self.to_vector(config)))

    def optimum(self) -> tuple[float, np.ndarray]:
        """``(f_opt, x_best)`` from COCO's best parameter, cached per (function, dim, instance)."""
        key = (self.function, self.dimension, self.instance)
        if key not in _OPTIMA:
            x_best = best_parameters(self._problem, _BEST_FILE)[0]
            _OPTIMA[key] = (float(self._problem(x_best)), x_best)
        f_opt, x_best = _OPTIMA[key]
        return f_opt, x_best.copy()


def bbob_mixint(function: int, dimension: int = 5, instance: int = 1) -> Problem:
    """COCO bbob-mixint function ``function`` (1-24) in ``dimension`` (5, 10, 20, 40, 80, 160).

    The returned problem's ``optimum`` is COCO's f_opt for the instance (regret = f - f_opt).
    """
    if not 1 <= function <= 24:
        raise ValueError(f"bbob-mixint function must be in 1..24, got {function}.")
    if dimension not in (5, 10, 20, 40, 80, 160):
        raise ValueError(f"bbob-mixint dimension must be 5, 10, ..., 160, got {dimension}.")
    if not 1 <= instance <= 15:
        raise ValueError(f"bbob-mixint instance must be in 1..15, got {instance}.")
    objective = BBOBMixintObjective(function, dimension, instance)
    f_opt, _ = objective.optimum()
    name = f"bbob-mixint-f{function}-d{dimension}-i{instance}"
    return Problem(name, objective.space(), objective, f_opt)


def best_config(problem: Problem) -> dict[str, Any]:
    """COCO's optimal point of a bbob-mixint problem as a config (ints for integer variables)."""
    objective = problem.function
    if not isinstance(objective, BBOBMixintObjective):
        raise TypeError(f"{problem.name} is not a bbob-mixint problem.")
    _, x_best = objective.optimum()
    return {
        name: int(round(v)) if i < objective.n_int else float(v)
        for i, (name, v) in enumerate(zip(objective.names, x_best, strict=True))
    }
