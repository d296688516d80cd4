"""A GP whose kernel is chosen among alternatives by the MAP objective (Bayesian model selection).

CASMOPOLITAN's transformed overlap kernel comes in two forms
(:class:`common.models.kernels.overlap.TransformedOverlapKernel`): the reference code's, whose
correlation between configurations that differ everywhere is fixed, and Eq. 5.11 of B. Ru's DPhil
thesis (University of Oxford, 2022), whose rate the fit learns. Neither is right for every problem:
the learnt rate is what Pest Control's 25 categoricals need, while with few observations it costs
problems whose categoricals matter less (see docs/decisions.md). So each fit fits every
alternative, each warm-started from its own last fit, and keeps the one of lowest negative log
posterior per observation: the form the data support, decided again at every refit.

The same choice is made between target warpings (:data:`common.models.warpings.WARPINGS`): the ranks
of a Gaussian copula, blended with a power transform, keep near-ties apart where a problem's values
are jumpy, while on a smooth function only the magnitudes let the GP fit the incumbent (on the
sphere bbob-mixint f1 at 50 trials, the blend's posterior mean at the incumbent sits 8.5
standard deviations below its observed value, the power transform's 0.2). A fit's MAP objective
is of the warped targets, so fits to different warpings are compared after subtracting the
warping's mean log-derivative at the values (:func:`common.models.warpings.warping_log_jacobian`),
which makes each a model of the values themselves (the warped GP of Snelson, Rasmussen and
Ghahramani 2004). With several warpings to fit, a refit continues the alternatives other than the
kept one for a few iterations only (:data:`CHALLENGER_MAXITER`).

A choice's parameters are one flat mapping (what :mod:`common.models.warm_store` stores with a
study): alternative ``i``'s raw parameters under ``"i.<name>"`` and the kept one's index under
``"choice"``.

>>> model, params = fit_choosing(X, y, [code_kernel, paper_kernel])
>>> same = condition_choice(X_more, y_more, [code_kernel, paper_kernel], params)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch
from gpytorch.kernels import Kernel

from common.models.gp import FIT_MAXITER, build_gp, fit_gp_scored
from common.models.refit import loaded
from common.models.warpings import warping_log_jacobian

CHOICE = "choice"
# Where the choice is among warpings too (MixboSampler: four alternatives on a space with a
# categorical), a warm-started refit of an alternative other than the kept one stops after this
# many L-BFGS-B iterations (the kept one's runs to the caller's cap,
# common.models.gp.WARM_FIT_MAXITER). Each fit continues from its own last result, so a challenger's
# fit still converges over a few refits: its optimum moves by O(1/n) per observation. What a
# challenger needs is its evidence, to the precision a comparison needs; the kept model, which the
# suggestions use, needs its optimum. It roughly halves MixboSampler's refit, its results within
# noise (see docs/decisions.md, "Challengers fitted briefly"). CASMOPOLITAN's choice of two kernel
# forms keeps both at the cap: its refit of two fits is within the latency target, and capping its
# challenger cost Func3C.
CHALLENGER_MAXITER = 5


def pack(fits: Sequence[Mapping[str, torch.Tensor]], choice: int) -> dict[str, torch.Tensor]:
    """Every alternative's parameters and the index of the kept one, as one flat mapping."""
    params = {f"{i}.{name}": value for i, fit in enumerate(fits) for name, value in fit.items()}
    params[CHOICE] = torch.tensor([float(choice)], dtype=torch.float64)
    return params


def unpack(params: Mapping[str, torch.Tensor] | None, i: int) -> dict[str, torch.Tensor] | None:
    """Alternative ``i``'s parameters in ``params`` (``None`` if it holds none)."""
    if params is None:
        return None
    prefix = f"{i}."
    own = {name[len(prefix) :]: v for name, v in params.items() if name.startswith(prefix)}
    return own or None


def chosen(params: Mapping[str, torch.Tensor] | None, n_alternatives: int) -> int | None:
    """The index of the kept alternative (``None`` for parameters that are not a choice's)."""
    if params is None or CHOICE not in params:
        return None
    value = params[CHOICE].reshape(-1)
    if value.numel() != 1 or not torch.isfinite(value).all():
        return None
    i = int(value.item())
    return i if 0 <= i < n_alternatives and i == float(value.item()) else None


def alternatives(
    makers: Sequence[Callable[[], Kernel]], warpings: Sequence[str]
) -> list[tuple[Callable[[], Kernel], str]]:
    """Every (kernel, target warping) pair a choice fits, in the order of its packed indices."""
    return [(make, warping) for warping in warpings for make in makers]


def fit_choosing(
    X: np.ndarray,
    values: np.ndarray,
    makers: Sequence[Callable[[], Kernel]],
    warm_start: Mapping[str, torch.Tensor] | None = None,
    warm_maxiter: int = FIT_MAXITER,
    warpings: Sequence[str] = ("copula",),
    cold_maxiter: int = FIT_MAXITER,
):
    """:func:`common.models.gp.fit_gp` with each kernel of ``makers`` on the targets of each of
    ``warpings`` (each warm-started from its part of ``warm_start``, a :func:`pack` result);
    returns the model of lowest MAP objective per observation, less its warping's log-Jacobian
    (:func:`common.models.warpings.warping_log_jacobian`: the evidence of the values themselves),
    and every alternative's parameters, packed (one alternative: no comparison). Where ``warpings``
    are several, a refit (``warm_start`` with a kept alternative) gives the kept one
    ``warm_maxiter`` iterations and the others :data:`CHALLENGER_MAXITER`; a fit from the
    priors stops after ``cold_maxiter``."""
    pairs = alternatives(makers, warpings)
    capped = chosen(warm_start, len(pairs)) if len(warpings) > 1 else None  # the kept one
    fitted = [
        fit_gp_scored(
            X,
            values,
            make,
            unpack(warm_start, i),
            warm_maxiter if capped in (None, i) else min(warm_maxiter, CHALLENGER_MAXITER),
            warping=warping,
            cold_maxiter=cold_maxiter,
        )
        for i, (make, warping) in enumerate(pairs)
    ]
    best = 0
    if len(fitted) > 1:
        jacobian = {w: warping_log_jacobian(w, values) for w in set(warpings)}
        scores = [
            loss - jacobian[warping]
            for (_, _, loss), (_, warping) in zip(fitted, pairs, strict=True)
        ]
        best = int(np.nanargmin(scores)) if np.isfinite(scores).any() else 0
    return fitted[best][0], pack([params for _, params, _ in fitted], best)


def condition_choice(
    X: np.ndarray,
    values: np.ndarray,
    makers: Sequence[Callable[[], Kernel]],
    params: Mapping[str, torch.Tensor],
    warpings: Sequence[str] = ("copula",),
):
    """The kept alternative of ``params`` with its hyper-parameters and its warping, conditioned
    on ``X`` and ``values`` (``None`` if ``params`` do not fit these alternatives)."""
    pairs = alternatives(makers, warpings)
    i = chosen(params, len(pairs))
    own = unpack(params, i) if i is not None else None
    if own is None:
        return None
    make, warping = pairs[i]
    return loaded(build_gp(X, values, make, warping=warping), own)
