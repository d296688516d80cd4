"""A second opinion on CASMOPOLITAN's candidates, from a model of main effects.

CASMOPOLITAN's transformed overlap kernel is a product over the categoricals (the exponential of
a weighted count of matches), so what it learns about "value v of variable i" reaches a
candidate only through configurations similar to it as a whole. CoCaBO's overlap kernel (Ru et
al. 2020) is a sum over the categoricals: a category's effect is shared by every configuration
that has it, wherever it was observed. On Ackley-5C's plateau, one category off the optimum, the
additive model ranks the change of the wrong variable far higher than the product model does on
the same history (``benchmarks/ackley5c_plateau.py --rank``), yet as the only model, or chosen by
evidence, or taking turns, it cost the problems whose interactions matter (see
docs/decisions.md, "A portfolio of two models").

So both judge: among the ends of the product model's local searches and the trust region
centre's unseen single-category neighbours, the suggestion is the row of highest sum of the two
models' log EI (the product of their expected improvements), a row that both expect to improve.
The product model's search still finds the candidates and its acquisition keeps the busy-point
penalties and constraints; the additive model only re-ranks them.

It applies only where some categorical has at least :data:`MIN_CHOICES` values and numeric
(float or integer) parameters join the categoricals. A binary variable's change has one
alternative and nothing to rank among its values, and on the spaces whose categoricals are all
binary (Ackley-53, Contamination) the second opinion lost runs. On categoricals alone the product
kernel's Hamming-ball search is the paper's method at its best, and there the second opinion cost
Pest Control's late refinement at 150 trials. The gate is measured, not derived (see
docs/decisions.md, "A second opinion from main effects").

>>> model = additive_model(strategy, space, X, values, every=2)
>>> row = best_by_both(acqf, log_expected_improvement(model, incumbent), rows, rng)
"""

from __future__ import annotations

from functools import partial

import numpy as np

from common.acquisition.functions import evaluate
from common.models.kernels.mixture import cocabo_kernel
from common.models.refit import fit_or_condition
from common.optim.local_search import highest
from common.space.mixed_space import MixedSpace

MIN_CHOICES = 3
# A refit continues the additive model's last fit for this many L-BFGS-B iterations, as a kernel
# choice continues its challengers (common.models.kernel_choice.CHALLENGER_MAXITER): refitted every
# few observations from its own last result, whose optimum one observation moves by O(1/n), it still
# converges over a few refits; a warm ask costs about a fifth less than with full refits, its
# results within noise (see docs/decisions.md, "Challengers fitted briefly").
REFIT_MAXITER = 5


def applies(space: MixedSpace) -> bool:
    """Whether some categorical of ``space`` has at least :data:`MIN_CHOICES` values and the
    space has numeric parameters too."""
    return bool(space.cont_dims) and any(k >= MIN_CHOICES for k in space.n_choices)


def additive_model(
    strategy,
    space: MixedSpace,
    X: np.ndarray,
    values: np.ndarray,
    every: int,
    study_length: int | None = None,
):
    """The GP of CoCaBO's kernel (its additive overlap kernel mixed with Matérn-5/2 on the
    continuous columns) on blended targets (:func:`common.models.warpings.blend_standardise`),
    refitted every ``every`` observations (:data:`REFIT_MAXITER` iterations from its last fit;
    of ``study_length`` where ``X`` is part of a longer history) and conditioned on all of them
    in between."""
    make = partial(cocabo_kernel, list(space.cont_dims), list(space.cat_dims))
    key = ("casmopolitan-main-effects", space)
    return fit_or_condition(
        strategy,
        key,
        X,
        values,
        make,
        every,
        REFIT_MAXITER,
        warping="blend",
        study_length=study_length,
    )


def best_by_both(acqf, second, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """The row of ``rows`` with the highest ``acqf + second`` (both log acquisitions; exact ties,
    such as a categorical's values neither model has seen, broken at random), ``None`` where no
    row has a finite sum."""
    if len(rows) == 0:
        return None
    total = evaluate(acqf, rows).reshape(-1) + evaluate(second, rows).reshape(-1)
    total = np.where(np.isfinite(total), total, -np.inf)
    best = highest(total, rng)
    return rows[best] if np.isfinite(total[best]) else None
