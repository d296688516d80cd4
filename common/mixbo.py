"""Mixbo: the default door, which runs the method that suits the spaces users run.

The rule, from the measurements (closing notes of the issue tracker; 2-core machine, median final
regret at 100 trials over 5 seeds, ``mixbo-compare`` at 3344bec): **CASMOPOLITAN, on every
space.** It has the best median of our three methods on 11 of the 13 public problems with mixed or
categorical parameters, and on 3 of the 4 spaces of integers and floats only, where BO-FM ran
before this rule: bbob-mixint f1 in 5 dimensions 3.1e-06 against BO-FM's 0.10 (BO-FM stalled in 3
of 5 seeds), f15 in 10 dimensions 8.5 against 11.3, the pressure vessel (constrained, 5 seeds at
5f1aafa) 6094 against 6268; on f10 in 10 dimensions BO-FM's 33.0 against 41.7 is a coin flip
(Mann-Whitney p = 1.0). No single comparison is significant at 5 seeds (p = 0.095, 0.31, 0.15);
the direction is consistent, and it held when f04a58a changed CASMOPOLITAN on integer columns
(f1 1.9e-04, f15 7.67, f10 41.5 on the same seeds, the pressure vessel 6106). CoCaBO trailed
the better of the other two almost everywhere (mean rank 4.4 against CASMOPOLITAN's 2.0). Where
Optuna's GPSampler beats CASMOPOLITAN (Pest Control, NuSVR, bbob-mixint f1 and f15), BO-FM and
CoCaBO do not beat it either, so no other choice of ours would win there.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.busy import BusyPolicy
from common.strategy import MethodOptions, Strategy, check_integer


@dataclass(frozen=True)
class MixboOptions(MethodOptions):
    """Mixbo's options: ``n_init`` observations form the initial design (CASMOPOLITAN's trust
    region does not count them as successes or failures); CASMOPOLITAN's other options keep
    their defaults."""

    n_init: int = 10

    def __post_init__(self) -> None:
        check_integer("n_init", self.n_init, 0)

    def make(self, busy: BusyPolicy) -> Strategy:
        """CASMOPOLITAN's strategy with these options (the rule above)."""
        from common.casmopolitan import CasmopolitanOptions

        return CasmopolitanOptions(n_init=self.n_init).make(busy)
