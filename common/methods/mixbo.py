"""Mixbo: the default door, which runs the method that suits the spaces users run.

The rule, from the measurements (closing notes of the issue tracker; 2-core machine, median final
regret at 100 trials, ``mixbo-compare``): **CASMOPOLITAN on every space, its targets warped by the
blend or the power transform, whichever fit has the higher evidence for the values** (chosen at
every refit: :func:`common.models.kernel_choice.fit_choosing`), **and, where a categorical of three
or more values meets numeric parameters, CoCaBO's additive model as a second opinion on its
candidates** (:mod:`common.methods.second_opinion`).

CASMOPOLITAN: at 5 seeds (3344bec) it had the best median of our three methods on 11 of the 13
public problems with mixed or categorical parameters, and on 3 of the 4 spaces of integers and
floats only, where BO-FM ran before this rule (bbob-mixint f1 in 5 dimensions 3.1e-06 against
BO-FM's 0.10, f15 in 10 dimensions 8.5 against 11.3, the pressure vessel 6094 against 6268; on
f10 BO-FM's 33.0 against 41.7 is a coin flip, Mann-Whitney p = 1.0). CoCaBO trailed the better
of the other two almost everywhere (mean rank 4.4 against CASMOPOLITAN's 2.0).

The blend warping (the mean of the Gaussian copula's z-scores, as in CASMOPOLITAN's code, and
a Box-Cox power transform's): with the copula, runs lost where how much worse a value is
matters (bbob-mixint f1, the sphere, 1.4e-4 against GPSampler's 8.5e-6: the ranks made the
incumbent's far worse integer neighbours look close); with the power transform alone, runs lost
where near-equal values must stay apart (Ackley-5C stuck one category off, 0.333; the HPOLib
tables no longer reached their optimum). At 10 seeds on the 13 public problems the blend was at
least as good as the better of TPE and GPSampler on 11 (copula 9, power transform 11, the latter
with an Ackley-5C tie on that plateau), and on 6 of 7 further problems it was not tuned on
(copula 6, power transform 5): c2c1622, README "Ranks and magnitudes". With CASMOPOLITAN's refits
capped (78b4d45): 11 of 13 at 10 seeds, 9 of 13 at 20 (four losses, three within noise), 5 of 7
further problems (bbob-mixint f13 lost). With the fits' noise searched on a log scale (3a1131a):
11 of 13 at 10 and at 20 seeds (bbob-mixint f1 lost; NuSVR at 10 seeds and Ackley-5C's plateau
at 20 within noise), 5 of 7 further problems (f13 and Pest Control's seed 8733 within noise). With
the transformed overlap kernel's form chosen per fit (bf3c82f, :mod:`common.models.kernel_choice`):
10 of 13 at 10 and at 20 seeds (f1 lost; NuSVR and Ackley-5C's plateau within noise), 6 of 7 further
problems (f13 within noise); Pest Control 0.70 -> 0.32 at 20 seeds, p < 0.01. With closed-form
fits and acquisitions and one L-BFGS-B run for all starts (943b793; the same models to rounding,
every problem within noise of bf3c82f): 10 of 13 at 10 seeds, 9 of 13 at 20 (f15 now lost within
noise, Ackley-5C's plateau at p = 0.047), 7 of 7 further problems. The same code (471283a) on a
fresh install, with TPE and GPSampler re-run beside it: 9 of 13 at 10 seeds (bbob-mixint f1 lost,
p = 0.026; Ackley-5C's plateau, f15 and NuSVR within noise), 6 of 7 further problems (f15's
instance 2 within noise).

The warping chosen by evidence (the blend kept where the values are jumpy, the power transform
where they are smooth enough for its magnitudes to fit the incumbent;
:mod:`common.models.kernel_choice`), against the blend alone at 471283a, seeds 0-9 at 100 trials,
median final regret, seeds better / worse, Wilcoxon p: bbob-mixint f1 8.0e-5 -> 1.6e-7 (10 / 0, p =
0.002), f13 0.21 -> 0.039 (9 / 1, p = 0.01), Func3C 8.6e-4 -> 4.1e-5 (6 / 1, p = 0.03), Func2C
1.1e-4 -> 1.3e-5 (5 / 2, p = 0.08), Ackley-53 0.74 -> 0.56 (7 / 2, p = 0.07); Ackley-5C 0.334 ->
0.539 (4 / 5, p = 0.36; at 40 trials 2 / 6, p = 0.05) and every other problem within noise (f8 0.75
-> 0.87, 0 / 3, p = 0.25). Against TPE and GPSampler run on the same install (cd649f5): at least as
good as the better of the two on 10 of 13 at 10 seeds (f1 now won, 1.6e-7 against 1.3e-5, p = 0.002;
Ackley-5C, f15 and NuSVR lost within noise) and on 7 of 7 further problems; 10 of 13 at 5 seeds.
With the alternatives it did not keep refitted for a few iterations (84bbca1,
:data:`common.models.kernel_choice.CHALLENGER_MAXITER`; warm ask at 100 trials 0.69x -> 0.44x
GPSampler's): every problem within noise of cd649f5 (57 seeds better, 49 worse over 200 runs),
again 10 of 13 at 10 seeds (the same three losses: Ackley-5C 0.333 against 0.173, f15 8.49 against
7.44, NuSVR) and 7 of 7 further problems; 10 of 13 at 5 seeds. With the acquisition maximised from
10 local searches (a93e3df, :data:`LOCAL_SEARCHES`): 11 of 13 at 10 seeds (f15 7.00 against
7.44 won; Ackley-5C 0.527 and NuSVR lost within noise), 7 of 7 further problems, 10 of 13 at 5
seeds.

With the additive model's second opinion (0c24813; not on categoricals alone since f43cb41,
where it cost Pest Control's optimum at 150 trials, 10 of 10 seeds -> 4): Ackley-5C's runs ending
within 0.05 of the optimum 28 of seeds 0-39 against 11 (GPSampler 18), median 0.012 against 0.333
(32 seeds better, 8 worse); over seeds 0-19 of the 13 public problems 41 runs better and 39
worse, Ackley-5C the only change beyond noise (Func3C 3.3e-5 -> 7.7e-5, 7 / 13, p = 0.90); spaces
whose categoricals are all binary, or without numeric parameters, unchanged. 11 of 13 at 5, 10
and 20 seeds (NuSVR lost within noise at each; f10 at 5, Ackley-5C by 2e-4 at 10, f15 at 20), 7
of 7 further problems. With the additive model refitted for 5 iterations from its last fit
(34e66cb, :data:`common.methods.second_opinion.REFIT_MAXITER`), the warm ask at 100 trials of the
mixed space costs 0.44x GPSampler's (0.62x at 0c24813, 0.50x before it; Log EI's gradient in numpy,
a319665, changed no suggestion); every problem within noise of f43cb41 (Ackley-5C 9 of seeds 0-19
better, 10 worse, 33 of seeds 0-39 within 0.05, median 0.012): 11 of 13 at 5 and 20 seeds, 12 of
13 at 10 (NuSVR lost within noise at each; f10 at 5, f15 at 20), 7 of 7 further problems.

With exact ties among candidates broken at random rather than by the order of a categorical's
choices (5fda7c1, :func:`common.optim.local_search.highest`), Ackley-5C with its categories
relabelled (``ackley5c~1``) ends within 0.05 in 15 of seeds 0-19, as Ackley-5C itself (11 against 14
before); against 34e66cb Ackley-53 0.305 -> 0.202 (13 / 6) and Pest Control 0.405 -> 0.255 (5 / 1),
the rest within noise. The same counts: 11, 12 and 11 of 13 at 5, 10 and 20 seeds; further problems
6 of 7 at 10 seeds (Pest Control's instance 8733 lost within noise, 0.766 against 0.743; over 20
seeds won, 0.47 against 0.93), and 5 of 6 relabelled problems (Contamination lost within noise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.batch.busy import BusyPolicy
from common.methods.casmopolitan.options import CasmopolitanOptions
from common.methods.options import MethodOptions, check_integer

if TYPE_CHECKING:
    from common.methods.strategy import Strategy

# The acquisition's optimiser, as GPSampler's has 10 local searches: with CASMOPOLITAN's 3 starts
# of 256 random rows, f15 (Rastrigin, 8 integers and 2 floats) ended at 8.49 against GPSampler's
# 7.44; with these, 7.00 (10 of 10 seeds better, Wilcoxon p = 0.002), and over the 20 problems at
# 10 seeds 91 runs better and 77 worse, every other problem within noise (README, "The
# acquisition's optimiser"). The warm ask at 100 trials costs 0.46-0.50x GPSampler's (0.44x before).
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
        ).make(busy)
