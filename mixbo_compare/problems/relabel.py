"""A problem with its categories relabelled: a held-back check that an optimiser does not use the
order in which a benchmark lists a categorical's choices.

``relabelled(problem, seed)`` has the same space, the same choices listed in the same order, and
the same values, but choice ``i`` of each categorical now stands for what choice ``π(i)`` stood
for, ``π`` a random permutation per parameter drawn from ``seed``. To a method that treats
categories as nominal (ours, GPSampler, TPE) it is the same problem; one that reads meaning into
the listing does not get it for free (Ax's first trial is the centre of the box, which on
Ackley-5C is the optimum: category 8 of 0–16 in every categorical).

>>> problem = relabelled(get_problem("ackley5c"), seed=1)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical
from mixbo_compare.problems.problem import Problem


def relabelled(problem: Problem, seed: int) -> Problem:
    """``problem`` with each categorical's choices permuted by a generator seeded with ``seed``
    (integer and float parameters untouched); a ``ValueError`` for a conditional problem, whose
    categoricals also select which parameters exist."""
    if problem.ask is not None:
        raise ValueError(
            f"{problem.name!r} is conditional: its categoricals select its branches, so it has "
            "no relabelled form; relabel a problem without branches."
        )
    rng = np.random.default_rng(seed)
    meaning = {
        p.name: (p, rng.permutation(len(p.choices)))
        for p in problem.space.params
        if isinstance(p, Categorical)
    }

    def original(config: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(config)
        for name, (param, order) in meaning.items():
            if name in out:
                out[name] = param.choices[order[param.index(out[name])]]
        return out

    def through(function):
        return None if function is None else (lambda config: function(original(config)))

    return Problem(
        name=f"{problem.name}~{seed}",
        space=problem.space,
        function=through(problem.function),
        optimum=problem.optimum,
        mean=through(problem.mean),
        seed_noise=problem.seed_noise,
        constraints=through(problem.constraints),
    )
