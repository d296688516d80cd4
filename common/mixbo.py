"""Mixbo: the default door, which runs the method that suits the search space in front of it.

The rule, from the measurements so far (closing notes of the issue tracker; 2-core machine, median
final regret at 100 trials unless said):

- **Any categorical parameter**: CASMOPOLITAN. With its log-EI over the centre's observed value
  (b8ca993) it led on every space with categoricals we ran: Ackley-5C (5 categoricals of 17
  values, 1 float; 0.051 over 10 seeds against BO-FM's 0.334 over 5), Func2C (0.0003 against
  0.0009) and Func3C (0.0016 against 0.0087; 5 seeds each), and, with many categoricals, Pest
  Control, Contamination and Ackley-53 (README).
- **Only integers and floats**: BO-FM, whose frequency-modulated kernel keeps integers ordered
  (path graphs): 33.0 [32.0, 41.7] against CASMOPOLITAN's 41.7 [25.8, 44.7] on bbob-mixint f10 in
  10 dimensions (5 seeds; weak evidence, and Optuna's GPSampler, about 4, beats both there).

CoCaBO is not chosen: it trailed the better of the other two in every sequential run we made. The
rule reads only the space's composition, so every process sharing a study, and a restored Ray
searcher, runs the same method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from common.busy import BusyPolicy
from common.history import History
from common.space import MixedSpace
from common.strategy import MethodOptions, Strategy, check_integer


def choose_method(space: MixedSpace) -> str:
    """``"casmopolitan"`` for a space with a categorical parameter, else ``"bofm"``."""
    return "casmopolitan" if space.cat_dims else "bofm"


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
