"""CASMOPOLITAN's options (Wan et al., ICML 2021): checked when built, light to import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.batch.busy import BusyPolicy
from common.methods.options import MethodOptions, check_choice, check_integer, check_number

if TYPE_CHECKING:
    from common.methods.casmopolitan.strategy import Casmopolitan

ACQUISITIONS = ("ei", "ucb")


WARPINGS = (
    "copula",
    "blend",
    "power",
)  # common.models.warpings.WARPINGS' names, without importing torch here


CHOSEN_WARPINGS = ("blend", "power")  # warping="evidence": the one of higher evidence per fit


@dataclass(frozen=True)
class CasmopolitanOptions(MethodOptions):
    """CASMOPOLITAN's options.

    ``n_init`` observations form the initial design (they set the first centre but do not count as
    successes or failures); ``acquisition`` is ``"ei"`` (log expected improvement over the
    centre's observed value) or ``"ucb"`` (with ``kappa``); ``kappa`` also weighs the restart
    UCB. ``failure_tolerance`` ``None`` means
    :func:`common.methods.casmopolitan.trust_region.default_failure_tolerance` of the box's
    dimension for the box and
    :func:`common.methods.casmopolitan.trust_region.default_hamming_failure_tolerance` for the
    Hamming ball; a number applies to both. ``n_starts`` local searches run per suggestion, from the
    centre and the best of ``n_raw`` random rows of the trust region
    (:func:`common.optim.local_search.local_optima`; the reference code's 3, and 256). GP
    hyper-parameters are refitted every ``refit_every`` observations (1: every call; the fit
    dominates the cost of a suggestion with many ARD weights) and reused, conditioned on all data,
    in between.
    ``warping`` names the GPs' target warping (:data:`common.models.warpings.WARPINGS`):
    ``"copula"``, Gaussian-copula ranks as in the paper's code; ``"blend"``, the mean of those
    ranks' and a Box-Cox power transform's z-scores, which also keeps how much worse a value is
    (:func:`common.models.warpings.blend_standardise`); ``"power"``, the power transform alone; or
    ``"evidence"``, the blend or the power transform, whichever fit has the higher evidence for
    the values themselves (:func:`common.models.kernel_choice.fit_choosing`), decided at every
    refit.
    ``second_opinion`` (with ``acquisition="ei"``): on a space with numeric parameters and a
    categorical of three or more values, the suggestion is the candidate of the local search that
    CoCaBO's additive model also expects to improve (:mod:`common.methods.second_opinion`).
    ``polish``: past 200 observations of a single-objective study with float parameters, once the
    incumbent's discrete part has settled, up to every other trial is a (1+1)-ES step from the
    incumbent, as far as the steps' gains earn it (:mod:`common.methods.casmopolitan.polish`).
    """

    n_init: int = 10
    acquisition: str = "ei"
    kappa: float = 2.0
    failure_tolerance: int | None = None
    success_tolerance: int = 3
    n_starts: int = 3
    n_raw: int = 256
    refit_every: int = 2
    warping: str = "copula"
    second_opinion: bool = False
    polish: bool = False

    def __post_init__(self) -> None:
        check_integer("n_init", self.n_init, 0)
        check_choice("acquisition", self.acquisition, ACQUISITIONS)
        check_number("kappa", self.kappa, 0.0)
        if self.failure_tolerance is not None:
            check_integer("failure_tolerance", self.failure_tolerance, 1)
        check_integer("success_tolerance", self.success_tolerance, 1)
        check_integer("n_starts", self.n_starts, 1)
        check_integer("n_raw", self.n_raw, 1)
        check_integer("refit_every", self.refit_every, 1)
        check_choice("warping", self.warping, (*WARPINGS, "evidence"))

    @property
    def warpings(self) -> tuple[str, ...]:
        """The target warpings each fit chooses among
        (:func:`common.models.kernel_choice.fit_choosing`)."""
        return CHOSEN_WARPINGS if self.warping == "evidence" else (self.warping,)

    def make(self, busy: BusyPolicy) -> Casmopolitan:
        # torch boundary: the strategy (torch, gpytorch) loads with the first model suggestion
        from common.methods.casmopolitan.strategy import Casmopolitan

        return Casmopolitan(self, busy)
