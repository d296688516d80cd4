"""The verdict of a comparison: is a sampler better than the best of the others, and is the
difference real?

For one problem, each sampler is set against the *best other*: the other sampler with the best
median final figure. Three numbers say how they compare over seeds:

- **wins**: on how many of their common seeds its final figure is better (ties counted apart);
- **p**: the two-sided Mann–Whitney U test of the two samples of final figures. Runs of two
  samplers share a seed number but nothing the sampler draws, so the samples are treated as
  independent and the test ranks them (no assumption on the values' distribution). A difference
  is *significant* at p < :data:`ALPHA`;
- **trials to target**: the median number of trials a sampler needed to reach the best median
  final figure of all samplers (the target), with how many of its runs reached it.

With few seeds even a perfect separation cannot reach significance (with 3 seeds each the
smallest possible p is 0.1): :func:`too_few` says so, and the verdict says it plainly rather than
reporting "no difference".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05


@dataclass(frozen=True)
class Verdict:
    """One sampler against the best other on one problem (figures minimised)."""

    sampler: str
    rival: str
    wins: int
    losses: int
    ties: int
    p_value: float
    seeds: tuple[int, int]  # runs of the sampler and of its rival

    @property
    def too_few(self) -> bool:
        return too_few(*self.seeds)

    @property
    def significant(self) -> bool:
        return not self.too_few and self.p_value < ALPHA

    def sentence(self) -> str:
        """The verdict in words."""
        common = self.wins + self.losses + self.ties
        record = f"better on {self.wins} of {common} seeds" + (
            f" ({self.ties} tied)" if self.ties else ""
        )
        if self.too_few:
            n, m = self.seeds
            return (
                f"{record}; too few seeds to tell (with {n} and {m} the smallest possible p is "
                f"{smallest_p(n, m):.2g}: run at least 4 each)"
            )
        if not self.significant:
            return f"{record}; no significant difference (p = {self.p_value:.2g})"
        better = self.wins > self.losses
        word = "better" if better else "worse"
        return f"{record}; significantly {word} (p = {self.p_value:.2g})"


def smallest_p(n: int, m: int) -> float:
    """The smallest two-sided p-value the Mann–Whitney U test can give with samples of ``n``
    and ``m``: both orderings of a complete separation, ``2 / C(n + m, n)``."""
    if n < 1 or m < 1:
        return 1.0
    return min(1.0, 2.0 / math.comb(n + m, n))


def too_few(n: int, m: int) -> bool:
    """Whether samples of ``n`` and ``m`` seeds can never reach significance at :data:`ALPHA`."""
    return smallest_p(n, m) >= ALPHA


def p_value(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Mann–Whitney U test of samples ``a`` and ``b`` (1 when they are identical)."""
    from scipy.stats import mannwhitneyu

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(a) or not len(b):
        return 1.0
    if np.unique(np.concatenate([a, b])).size == 1:
        return 1.0
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def against_best_other(finals: Mapping[str, Mapping[int, float]]) -> list[Verdict]:
    """Each sampler of ``finals`` (``finals[sampler][seed]``: final figure, minimised; NaN: no
    figure) against the other with the lowest median; none when fewer than two samplers ran."""
    clean = {
        s: {seed: v for seed, v in by_seed.items() if math.isfinite(v)}
        for s, by_seed in finals.items()
    }
    clean = {s: v for s, v in clean.items() if v}
    medians = {s: float(np.median(list(v.values()))) for s, v in clean.items()}
    out = []
    for s, mine in clean.items():
        others = [o for o in medians if o != s]
        if not others:
            continue
        rival = min(others, key=lambda o: medians[o])
        theirs = clean[rival]
        common = sorted(set(mine) & set(theirs))
        wins = sum(mine[k] < theirs[k] for k in common)
        losses = sum(mine[k] > theirs[k] for k in common)
        a, b = list(mine.values()), list(theirs.values())
        ties = len(common) - wins - losses
        out.append(Verdict(s, rival, wins, losses, ties, p_value(a, b), (len(a), len(b))))
    return out


def trials_to_target(curves: Sequence[np.ndarray], target: float) -> tuple[float, int]:
    """Median number of trials the runs' best-so-far ``curves`` (minimised) took to reach
    ``target``, and how many reached it. A run that never did counts as never finishing, so the
    median is infinite unless at least half reached it (the lower middle of an even count: the
    best median's own sampler reaches its median on half its seeds)."""
    needed = []
    for c in curves:
        reached = np.flatnonzero(np.asarray(c, dtype=float) <= target)
        needed.append(float(reached[0] + 1) if len(reached) else math.inf)
    if not needed:
        return math.nan, 0
    return sorted(needed)[(len(needed) - 1) // 2], sum(math.isfinite(n) for n in needed)


Problem = tuple[str, Mapping[str, Mapping[int, float]], Mapping[str, Sequence[np.ndarray]]]


def section(problems: Iterable[Problem], title: str) -> list[str]:
    """A report's verdict section: for each ``(problem, finals, curves)`` (each sampler's final
    figure per seed and its runs' curves, all minimised: pass a negated hypervolume), every
    sampler against the best other, and the trials it took to reach the best median."""
    rows = []
    for problem, finals, curves in problems:
        medians = {s: float(np.median(list(v.values()))) for s, v in finals.items() if v}
        finite = [m for m in medians.values() if math.isfinite(m)]
        if len(finite) < 2:
            continue
        target = min(finite)
        for v in against_best_other(finals):
            needed, reached = trials_to_target(curves[v.sampler], target)
            runs = len(curves[v.sampler])
            to_target = (
                f"{needed:.0f} ({reached} of {runs} runs reached it)"
                if math.isfinite(needed)
                else f"median not reached ({reached} of {runs} runs reached it)"
            )
            name = f"**{v.sampler}**" if medians.get(v.sampler) == target else v.sampler
            rows.append(f"| {problem} | {name} | {v.rival} | {v.sentence()} | {to_target} |")
    if not rows:
        return []
    return [
        f"## Verdict: {title}",
        "",
        "Each sampler against the best other (the other sampler with the best median): on how "
        "many seeds its final figure is better, and whether the difference is significant by a "
        f"two-sided Mann–Whitney U test over seeds at p < {ALPHA} (runs of two samplers share "
        "only the seed number, so the samples are taken as independent). With 3 or fewer seeds "
        "each no difference can be significant: the verdict says so. Trials to target: the "
        "median number of trials needed to reach the best median final figure of the problem "
        "(in bold: the sampler that has it).",
        "",
        "| problem | sampler | best other | verdict | trials to target |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ]
