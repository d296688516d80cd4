"""Mixbo: the default door, which runs the method that suits the spaces users run.

The preset is CASMOPOLITAN (Wan et al., "Think global and act local: Bayesian optimisation over
high-dimensional categorical and mixed search spaces", ICML 2021) on every space, with four
departures from the paper, each kept because it measured better overall on the public
mixed-variable benchmarks (``mixbo-compare``), though not always on every problem:

- the GP's targets are warped by the blend of a Gaussian copula and a power transform, or by the
  power transform alone, whichever fit has the higher evidence at each refit
  (:func:`common.models.kernel_choice.fit_choosing`): ranks alone lose how much worse a value is;
- the acquisition is maximised from :data:`LOCAL_SEARCHES` local searches rather than 3;
- where a categorical of three or more values meets numeric parameters, CoCaBO's additive model
  (Ru et al., "Bayesian optimisation over multiple continuous and categorical inputs", ICML 2020)
  gives a second opinion on the candidates (:mod:`common.methods.second_opinion`), as the product
  kernel alone tends to stay one category off the optimum;
- past 200 observations, once the incumbent's categorical and integer values have settled,
  (1+1)-ES steps from the incumbent share the trials with the trust region
  (:mod:`common.methods.casmopolitan.polish`): below the resolution of the trust region's GP, its
  step-size rule without the model keeps converging on the incumbent's float parameters.

Why CASMOPOLITAN rather than CoCaBO or BO-FM, and the measurements behind each departure: see
``docs/decisions.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.batch.busy import BusyPolicy
from common.methods.casmopolitan.options import CasmopolitanOptions
from common.methods.options import MethodOptions, check_integer

if TYPE_CHECKING:
    from common.methods.strategy import Strategy

# The acquisition's optimiser, as GPSampler's has 10 local searches: with CASMOPOLITAN's 3 starts of
# 256 random rows, bbob-mixint f15 (8 integers, 2 floats) ended further from its optimum on every
# seed (see docs/decisions.md).
LOCAL_SEARCHES = 10
RAW_SAMPLES = 1024


@dataclass(frozen=True)
class MixboOptions(MethodOptions):
    """Mixbo's options: ``n_init`` observations form the initial design (CASMOPOLITAN's trust
    region does not count them as successes or failures). The acquisition is maximised by
    :data:`LOCAL_SEARCHES` local searches from the best of :data:`RAW_SAMPLES` random rows of the
    trust region (CASMOPOLITAN's defaults: 3 and 256); CASMOPOLITAN's other options keep their
    defaults."""

    n_init: int = 10

    def __post_init__(self) -> None:
        check_integer("n_init", self.n_init, 0)

    def make(self, busy: BusyPolicy) -> Strategy:
        """CASMOPOLITAN's strategy with these options (the rule above)."""
        return CasmopolitanOptions(
            n_init=self.n_init,
            warping="evidence",
            n_starts=LOCAL_SEARCHES,
            n_raw=RAW_SAMPLES,
            second_opinion=True,
            polish=True,
        ).make(busy)
