"""Mixbo: the default door, which runs the method that suits the search space in front of it.

The rule, from the measurements so far (README and the issue tracker's closing notes; medians over
5–12 seeds on a 2-core machine):

- **Many categorical parameters** (at least :data:`MANY_CATEGORICALS`): CASMOPOLITAN. Its trust
  regions were built for this and lead every method we measured there: Pest Control (25
  categoricals of 5 values; 13.5 against BO-FM's 15.1 and CoCaBO's 16.4 at 60 trials, 12 seeds),
  Contamination (25 binaries), Ackley-53 (50 binaries and 3 floats; 0.21 against TPE's 1.67 at
  150 trials).
- **Otherwise** (a few categoricals, integers and floats): BO-FM, whose frequency-modulated kernel
  keeps integers ordered (path graphs) and couples them with the floats. It led on Func3C (3
  categoricals and 2 floats; 0.03 regret against CASMOPOLITAN's 0.73 at 60 trials, 12 seeds),
  Ackley-5C (5 categoricals of 17 values, 1 float) and the 10-dimensional bbob-mixint function we
  ran, where both trail Optuna's GPSampler.

CoCaBO is not chosen: it trailed the better of the other two in every sequential run of those
tables. The rule
reads only the space's composition, so every process sharing a study, and a restored Ray searcher,
runs the same method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from common.busy import BusyPolicy
from common.history import History
from common.space import MixedSpace
from common.strategy import MethodOptions, Strategy, check_integer

MANY_CATEGORICALS = 10  # between Ackley-5C's 5 (BO-FM better) and Pest Control's 25 (CASMOPOLITAN)


def choose_method(space: MixedSpace) -> str:
    """``"casmopolitan"`` for a space with many categorical parameters, else ``"bofm"``."""
    return "casmopolitan" if len(space.cat_dims) >= MANY_CATEGORICALS else "bofm"


@dataclass(frozen=True)
class MixboOptions(MethodOptions):
    """Mixbo's options: ``n_init`` observations form the initial design (CASMOPOLITAN's trust
    region does not count them as successes or failures). Each method runs with its defaults."""

    n_init: int = 10

    def __post_init__(self) -> None:
        check_integer("n_init", self.n_init, 0)

    def make(self, busy: BusyPolicy) -> Mixbo:
        return Mixbo(self, busy)


class Mixbo(Strategy):
    """Runs :func:`choose_method`'s method for each search space (built once per method)."""

    def __init__(self, options: MixboOptions = MixboOptions(), busy: BusyPolicy = BusyPolicy()):
        super().__init__(busy)
        self.options = options
        self.methods: dict[str, Strategy] = {}

    def method_for(self, space: MixedSpace) -> Strategy:
        """The strategy that runs on ``space``."""
        name = choose_method(space)
        if name not in self.methods:
            if name == "casmopolitan":
                from common.casmopolitan import CasmopolitanOptions

                options: MethodOptions = CasmopolitanOptions(n_init=self.options.n_init)
            else:
                from common.bofm import BOFMOptions

                options = BOFMOptions()
            self.methods[name] = options.make(self.busy)
        return self.methods[name]

    def suggest(
        self, space: MixedSpace, history: History, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        return self.method_for(space).suggest(space, history, n, rng)
