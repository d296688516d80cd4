"""Polishing the incumbent: (1+1)-ES steps beside the trust region in a long study.

Past :data:`~common.methods.casmopolitan.trust_region.LOCAL_DATA` observations, some trials are
steps of a (1+1) evolution strategy from the study's best trial: its categorical, integer and grid
columns kept, its float columns moved in the unit cube by ``sigma·N(0, I)``, ``sigma`` adapted by
Rechenberg's 1/5th-success rule (×e^0.8 when a step improves on the study's best, ×e^-0.2 when it
does not, so it settles where one step in five succeeds: Rechenberg 1973; Hansen, Arnold and
Auger, "Evolution strategies", 2015, on its linear convergence). The steps and the trust region
share the trials as a bandit over realised improvement: every other trial is a step while the
steps' recent gains match the trust region's, one in eight otherwise (:func:`replay_polish`).
The steps wait for the incumbent's discrete part to settle: they take turns only while the
incumbent's categorical, integer and grid values have stayed the same for at least the second half
of the study. A step searches the floats of one discrete assignment; while the trust region still
moves the incumbent between assignments (the basins of a multimodal problem), its trials are
worth more than the incumbent's last digits. An incumbent with no active float (a conditional
space's branch without one) has nothing to polish: its turns stay the trust region's.

Why beside the trust region: its GP sees the 200 rows nearest its centre and has a noise floor, so
below that resolution it cannot tell the incumbent's neighbours apart; the box shrinks to its
minimum and restarts while the incumbent's last digits stay where they are. The trust region's own
rule (expand after successes, shrink after failures) is a step-size adaptation; the 1/5th-success
rule is its model-free form, which keeps converging below the model's resolution. The steps start
at the box's minimum side (:data:`~common.methods.casmopolitan.trust_region.LENGTH_MIN`), where the
trust region stops.

The polish is a function of the ordered history, as the trust region is: which positions are
steps, their share and each step's ``sigma`` are replayed from the values (:func:`replay_polish`),
so workers sharing a study agree. In a parallel study a suggestion's position counts the running
trials, and the finished trials' order follows those positions only roughly.
The trust region is blind to the steps: they are not its successes or failures and not its GP's
rows, so its restarts keep exploring while the incumbent is polished. A step size at its floor
has converged: its turns go back to the trust region until the trust region finds a new best,
from which the steps start again at their first size (:func:`replay_polish`).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from common.methods.casmopolitan.trust_region import LENGTH_MIN, LOCAL_DATA
from common.space.mixed_space import MixedSpace

SIGMA_INIT = LENGTH_MIN
SIGMA_MIN = 2.0**-50  # a unit-cube step below float64's resolution of a coordinate
SIGMA_MAX = 0.5
LOG_SUCCESS = 0.8  # with LOG_FAILURE: 0.8·p = 0.2·(1 - p) at p = 1/5
LOG_FAILURE = -0.2
RECENT = 10  # each source's last trials, whose mean gain decides the turns
GAP_EARNED = 2  # every other trial a step, while steps gain at least as much as the region
GAP_MEASURED = 8  # else one trial in eight: the steps' gains stay measured


@dataclass(frozen=True)
class Polish:
    """Which history positions were polish steps, the gap to the next step's turn after the last
    one (``last``), the step size, whether the strategy rests (its step size converged) and
    whether the incumbent is ready for a step (its discrete part unchanged for the second half
    of the study, a float of it active)."""

    steps: np.ndarray  # (n,) bool
    sigma: float
    last: int = LOCAL_DATA - 1
    gap: int = GAP_EARNED
    resting: bool = True
    ready: bool = True

    def due(self, position: int) -> bool:
        """Whether the suggestion at ``position`` (past the history, counting its running
        trials) is a step: its turn, the strategy enabled and not resting, the incumbent ready."""
        return (
            position > LOCAL_DATA
            and position - self.last >= self.gap
            and self.ready
            and not self.resting
        )

    def turns(self, position: int, n: int) -> int:
        """How many of a batch's ``n`` suggestions, from ``position`` on, are steps."""
        count, last = 0, self.last
        for p in range(position, position + n):
            if dataclasses.replace(self, last=last).due(p):
                count, last = count + 1, p
        return count


def applies(space: MixedSpace, n_objectives: int) -> bool:
    """Whether a study polishes at all: one objective (an incumbent) and float columns
    (:attr:`~common.space.mixed_space.MixedSpace.float_dims`, the columns a step moves)."""
    return n_objectives == 1 and bool(space.float_dims)


@dataclass(frozen=True)
class PolishTrace:
    """The replay's state after its observations, from which :func:`extend_polish` continues
    where the history only grew: the :class:`Polish`, the best value, where the incumbent's
    discrete part last changed (``since``), the incumbent (its position, its discrete part's
    ``key`` and whether it can move), ``log(sigma)`` and each source's recent gains."""

    polish: Polish
    best: float = np.inf
    since: int = 0
    incumbent: int = 0
    key: object = None
    movable: bool = True
    log_sigma: float = float(np.log(SIGMA_INIT))
    step_gains: tuple[float, ...] = ()
    region_gains: tuple[float, ...] = ()

    @property
    def n(self) -> int:
        """How many observations it has replayed."""
        return len(self.polish.steps)


START = PolishTrace(Polish(np.zeros(0, bool), SIGMA_INIT, resting=False))


def extend_polish(
    trace: PolishTrace,
    values: np.ndarray,
    keys: Sequence[object] | None = None,
    movable: np.ndarray | None = None,
) -> PolishTrace:
    """``trace`` (:data:`START`, or the trace of a prefix of ``values``) continued over the rest
    of the ordered ``values`` (to minimise). For each observation after the trace's, ``keys``
    stands for its discrete part (equal keys: the same categorical, integer and grid values;
    none: all the same) and ``movable`` says whether it has an active float for a step to move
    (none: all).

    The two sources, steps and the trust region's trials, are played as a bandit over realised
    improvement: a trial's gain is how much it improved on the best value before it; while the
    mean gain of the last :data:`RECENT` steps is at least that of the trust region's last
    :data:`RECENT` trials, every other trial is a step (:data:`GAP_EARNED`), else one in
    :data:`GAP_MEASURED`. Each step's outcome adapts ``sigma`` by the 1/5th-success rule. A
    converged strategy (``sigma`` at its floor) rests until another trial improves the best,
    then starts again from :data:`SIGMA_INIT`. No step is due while the incumbent's discrete
    part changed in the second half of the study so far (since position ``(i + 1) / 2``), nor
    from an incumbent that cannot move. Every quantity is causal, so a trace continued over new
    observations equals the replay of the whole history."""
    values = np.asarray(values, dtype=float)
    floor, ceiling = np.log(SIGMA_MIN), np.log(SIGMA_MAX)
    t = trace
    polish, best, since, incumbent, key, can_move = (
        t.polish,
        t.best,
        t.since,
        t.incumbent,
        t.key,
        t.movable,
    )
    log_sigma = t.log_sigma
    step_gains = deque(t.step_gains, maxlen=RECENT)
    region_gains = deque(t.region_gains, maxlen=RECENT)
    steps = np.concatenate([polish.steps, np.zeros(len(values) - t.n, bool)])
    polish = dataclasses.replace(polish, steps=steps)
    for i in range(t.n, len(values)):
        value = values[i]
        gain = max(best - value, 0.0) if i else 0.0  # on the best before it
        if value < best or not i:  # a new incumbent: its discrete part moved, or not
            own = keys[i - t.n] if keys is not None else None
            since = i if i and own != key else since
            best, incumbent, key = value, i, own
            can_move = True if movable is None else bool(movable[i - t.n])
        ready = since <= (i + 1) / 2 and can_move
        if i <= LOCAL_DATA:  # the trust region's own trials before any step is due
            region_gains.append(gain)
            polish = dataclasses.replace(polish, ready=ready)
            continue
        if polish.due(i):
            steps[i] = True
            step_gains.append(gain)
            log_sigma += LOG_SUCCESS if gain > 0 else LOG_FAILURE
            log_sigma = min(max(log_sigma, floor), ceiling)
            last = i
        else:
            region_gains.append(gain)
            last = polish.last
            if gain > 0 and polish.resting:  # the trust region moved the incumbent
                log_sigma = np.log(SIGMA_INIT)
        earned = not step_gains or np.mean(step_gains) >= np.mean(region_gains)
        polish = Polish(
            steps,
            float(np.exp(log_sigma)),
            last,
            GAP_EARNED if earned else GAP_MEASURED,
            resting=bool(log_sigma <= floor),
            ready=bool(ready),
        )
    return PolishTrace(
        polish,
        best,
        since,
        incumbent,
        key,
        can_move,
        log_sigma,
        tuple(step_gains),
        tuple(region_gains),
    )


def replay_polish(
    values: np.ndarray,
    enabled: bool = True,
    discrete: np.ndarray | None = None,
    movable: np.ndarray | None = None,
) -> Polish:
    """The polish after the ordered ``values`` (to minimise), none where not ``enabled``;
    ``discrete`` labels each observation's discrete part (equal labels: the same categorical,
    integer and grid values), none: all the same; ``movable`` says which observations have an
    active float for a step to move, none: all. The whole history replayed by
    :func:`extend_polish` from :data:`START`."""
    if not enabled:
        return Polish(np.zeros(len(values), bool), SIGMA_INIT)
    keys = None if discrete is None else np.asarray(discrete).tolist()
    return extend_polish(START, values, keys, movable).polish


def movable_rows(space: MixedSpace, X: np.ndarray) -> np.ndarray:
    """Which encoded rows ``X`` have an active float column, for a step to move."""
    active = space.active_mask(X)
    return active[:, list(space.float_dims)].any(axis=1)


def polish_step(
    space: MixedSpace, X: np.ndarray, values: np.ndarray, sigma: float, rng: np.random.Generator
) -> np.ndarray:
    """One (1+1)-ES offspring of the best row of ``X`` (one with an active float: a step is due
    only from such an incumbent): its active float columns plus ``sigma·N(0, I)``, clipped to the
    unit cube; every other column as the incumbent's."""
    best = np.array(X[int(np.argmin(values))], dtype=float)
    active = space.active_mask(best[None])[0]
    columns = [j for j in space.float_dims if active[j]]
    best[columns] = np.clip(best[columns] + sigma * rng.standard_normal(len(columns)), 0.0, 1.0)
    return best
