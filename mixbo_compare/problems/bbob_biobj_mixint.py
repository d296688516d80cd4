"""COCO ``bbob-biobj-mixint`` problems (two objectives; integer + continuous variables).

Source: the COCO platform's bi-objective mixed-integer suite, PyPI ``coco-experiment`` (import
``cocoex``). Each function combines two bbob-mixint functions; the layout of the variables is
bbob-mixint's (:mod:`mixbo_compare.problems.bbob_mixint`: the first 4d/5 are integers with
ranges [0, 1], [0, 3], [0, 7], [0, 15], the last d/5 continuous), with COCO's bounds for this
suite, [-100, 100] for the continuous ones. Parameters are named ``x0 .. x{d-1}``; as there, the
objective clips each coordinate to its bounds and rounds integers half up before calling COCO.

Normalisation. The ideal point is COCO's: each objective's optimum, from COCO's
``_best_parameter("print")`` (a file written in a temporary directory), evaluated. COCO's nadir
point (``largest_fvalues_of_interest``, the objectives at the other objective's optimum) bounds
only the front, and a 100-trial run rarely gets inside it, which would give almost every run a
hypervolume of 0 (with COCO's nadir, random search, TPE and NSGA-II reached 0 in most of the
seeds tried at 100 trials); so the nadir here is, per objective, the worse of COCO's nadir and
the 10 % quantile over a fixed sample of 10 000 uniformly random configurations
(``numpy.random.default_rng(0)``, integers uniform over their values), computed when the problem
is built: about what a random search of a few tens of trials reaches in each objective alone.
The true front's hypervolume is not known here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mixbo_compare.problems.bbob_mixint import CocoObjective, best_parameters
from mixbo_compare.problems.problem import MultiObjectiveProblem

_BEST_FILE = "._bbob_biobj_problem_best_parameter.txt"
RANDOM_SAMPLE = 10_000
RANDOM_QUANTILE = 0.1


class BiobjMixintObjective(CocoObjective):
    """Callable ``config -> (f1, f2)`` for one bbob-biobj-mixint problem."""

    SUITE = "bbob-biobj-mixint"

    def __call__(self, config: Mapping[str, Any]) -> list[float]:
        return [float(v) for v in self._problem(self.to_vector(config))]

    def extremes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ideal, nadir)``: each objective's optimum, and the objectives at the other's."""
        optima = best_parameters(self._problem, _BEST_FILE)
        values = np.array([self._problem(x) for x in optima])  # row i: f at objective i's optimum
        ideal = np.diag(values).copy()
        nadir = np.asarray(self._problem.largest_fvalues_of_interest, dtype=float)
        return ideal, nadir

    def random_quantile(self, n: int = RANDOM_SAMPLE, q: float = RANDOM_QUANTILE) -> np.ndarray:
        """Each objective's ``q`` quantile over ``n`` uniformly random configurations (seeded)."""
        rng = np.random.default_rng(0)
        x = rng.uniform(self.lower, self.upper, size=(n, self.dimension))
        x[:, : self.n_int] = rng.integers(
            self.lower[: self.n_int].astype(int),
            self.upper[: self.n_int].astype(int) + 1,
            size=(n, self.n_int),
        )
        return np.quantile(np.array([self._problem(row) for row in x]), q, axis=0)


def bbob_biobj_mixint(
    function: int, dimension: int = 5, instance: int = 1
) -> MultiObjectiveProblem:
    """COCO bbob-biobj-mixint function ``function`` (1-92) in ``dimension`` (5, 10, ..., 160),
    normalised by COCO's ideal and nadir points."""
    if not 1 <= function <= 92:
        raise ValueError(f"bbob-biobj-mixint function must be in 1..92, got {function}.")
    if dimension not in (5, 10, 20, 40, 80, 160):
        raise ValueError(f"bbob-biobj-mixint dimension must be 5, 10, ..., 160, got {dimension}.")
    if not 1 <= instance <= 15:
        raise ValueError(f"bbob-biobj-mixint instance must be in 1..15, got {instance}.")
    objective = BiobjMixintObjective(function, dimension, instance)
    ideal, front_nadir = objective.extremes()
    nadir = np.maximum(front_nadir, objective.random_quantile())
    return MultiObjectiveProblem(
        f"mo-bbob-biobj-mixint-f{function}-d{dimension}-i{instance}",
        objective.space(),
        objective,
        ideal=tuple(float(v) for v in ideal),
        nadir=tuple(float(v) for v in nadir),
    )
