"""CoCaBO's options (Ru et al., ICML 2020): checked when built, light to import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.batch.busy import BusyPolicy
from common.methods.options import MethodOptions, check_integer, check_number

if TYPE_CHECKING:
    from common.methods.cocabo.strategy import CoCaBO


@dataclass(frozen=True)
class CoCaBOOptions(MethodOptions):
    """CoCaBO's options. ``n_init`` observations form the initial design and do not update the
    bandits; ``horizon`` is the budget that sets EXP3's exploration rate (Auer's schedule, the
    paper's 200); ``kappa`` is UCB's exploration weight (the paper's 2)."""

    n_init: int = 10
    kappa: float = 2.0
    horizon: int = 200

    def __post_init__(self) -> None:
        check_integer("n_init", self.n_init, 0)
        check_number("kappa", self.kappa, 0.0)
        check_integer("horizon", self.horizon, 1)

    def make(self, busy: BusyPolicy) -> CoCaBO:
        # torch boundary: the strategy (torch, gpytorch) loads with the first model suggestion
        from common.methods.cocabo.strategy import CoCaBO

        return CoCaBO(self, busy)
