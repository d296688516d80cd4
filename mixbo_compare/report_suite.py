"""The page of a generalisation-suite run (:mod:`mixbo_compare.suites`): every problem's medians,
whether ``mixbo`` beat the baselines there and how surely, and the claims over each part.

Definitions (also on the page):

- per problem, each sampler's **median final figure** over seeds: regret for single-objective
  problems (lower is better), normalised hypervolume for multi-objective ones (higher is better);
- **win**: ``mixbo``'s median is at least as good as the better of TPE's and GPSampler's;
- **p**: the two-sided Mann–Whitney U test of ``mixbo``'s final figures against that better
  baseline's, over seeds (:mod:`mixbo_compare.verdict`);
- **beyond TPE's IQR**: ``mixbo``'s median is worse than TPE's third quartile (its first, for a
  hypervolume), the suite's "never worse than TPE beyond its IQR" check;
- the part's **paired test**: a Wilcoxon signed-rank test over problems of ``mixbo``'s mean rank
  minus the better baseline's mean rank (ranks among the samplers on each seed), so each problem
  counts once whatever its scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mixbo_compare import provenance, report, report_mo, suites, verdict
from mixbo_compare.run_data import RunData
from mixbo_compare.stats import fmt, median_iqr, ranks

OURS = "mixbo"
RIVALS = ("tpe", "gp")
OTHERS = ("catcmawm",)


@dataclass(frozen=True)
class Row:
    """One problem of the suite: each sampler's final figures by seed, minimised (a hypervolume
    negated), and how to show them (``sign``: -1 for a hypervolume)."""

    problem: str
    family: str
    part: str
    finals: dict[str, dict[int, float]]
    sign: float

    def median(self, sampler: str) -> float:
        return median_iqr(self.finals.get(sampler, {}).values())[0]

    def rival(self) -> str | None:
        """The better of TPE and GPSampler here (None when neither ran)."""
        present = [s for s in RIVALS if math.isfinite(self.median(s))]
        return min(present, key=self.median) if present else None

    def win(self) -> bool | None:
        rival = self.rival()
        if rival is None or not math.isfinite(self.median(OURS)):
            return None
        return self.median(OURS) <= self.median(rival)

    def p_value(self) -> float:
        rival = self.rival()
        if rival is None or OURS not in self.finals:
            return math.nan
        return verdict.p_value(list(self.finals[OURS].values()), list(self.finals[rival].values()))

    def beyond_tpe(self) -> bool:
        """Whether mixbo's median is worse than TPE's third quartile (minimised figures)."""
        tpe = list(self.finals.get("tpe", {}).values())
        if not tpe or not math.isfinite(self.median(OURS)):
            return False
        return self.median(OURS) > float(np.percentile(tpe, 75))

    def rank_gap(self) -> float:
        """mixbo's mean rank minus the better baseline's, over the seeds both ran."""
        rival = self.rival()
        if rival is None or OURS not in self.finals:
            return math.nan
        r = ranks(self.finals)
        return float(np.mean(r[OURS]) - np.mean(r[rival])) if r[OURS] and r[rival] else math.nan

    def shown(self, sampler: str) -> str:
        med = self.median(sampler)
        return fmt(self.sign * med) if math.isfinite(med) else "–"


def rows(runs: Sequence[RunData]) -> list[Row]:
    """Each problem of ``runs`` as a :class:`Row`, in the suite's order."""
    multi = report_mo.multi_objective_problems(runs)
    found: dict[str, Row] = {}
    for st in report.group([r for r in runs if r.problem not in multi]):
        found[st.problem] = _row(st.problem, st.finals(), 1.0)
    for mst in report_mo.group([r for r in runs if r.problem in multi]):
        negated = {s: {k: -v for k, v in f.items()} for s, f in mst.finals().items()}
        found[mst.problem] = _row(mst.problem, negated, -1.0)
    order = {m.name: i for i, m in enumerate(suites.members())}
    return sorted(found.values(), key=lambda r: order.get(r.problem, len(order)))


def _row(problem: str, finals: dict[str, dict[int, float]], sign: float) -> Row:
    member = suites.member(problem)
    family = member.family if member else "-"
    part = member.part if member else "-"
    return Row(problem, family, part, finals, sign)


def claims(part_rows: Sequence[Row]) -> list[str]:
    """The part's claims: wins against the better of TPE and GPSampler and against CatCMA with
    Margin, the problems beyond TPE's IQR, and the paired test over problems."""
    from scipy.stats import wilcoxon

    decided = [r for r in part_rows if r.win() is not None]
    wins = [r for r in decided if r.win()]
    lines = [
        f"- {OURS}'s median ≤ the better of TPE's and GPSampler's on **{len(wins)} of "
        f"{len(decided)}** problems ({_share(len(wins), len(decided))}); significantly worse "
        f"(p < {verdict.ALPHA}) on "
        + _names([r for r in decided if not r.win() and r.p_value() < verdict.ALPHA])
        + "."
    ]
    beyond = [r for r in part_rows if r.beyond_tpe()]
    lines.append(f"- Worse than TPE's median beyond TPE's IQR on {_names(beyond)}.")
    for other in OTHERS:
        both = [r for r in part_rows if math.isfinite(r.median(other))]
        both = [r for r in both if math.isfinite(r.median(OURS))]
        ahead = [r for r in both if r.median(OURS) <= r.median(other)]
        if both:
            lines.append(
                f"- ≤ {other}'s median on {len(ahead)} of {len(both)} "
                f"({_share(len(ahead), len(both))})."
            )
    gaps = [r.rank_gap() for r in part_rows]
    gaps = [g for g in gaps if math.isfinite(g)]
    if len([g for g in gaps if g != 0]) >= 6:
        test = wilcoxon(gaps)
        mean_gap = float(np.mean(gaps))
        lines.append(
            f"- Paired over {len(gaps)} problems (Wilcoxon signed-rank of {OURS}'s mean rank "
            f"minus the better baseline's): mean difference {mean_gap:+.2f} "
            f"({'ahead' if mean_gap < 0 else 'behind'}), p = {test.pvalue:.2g}."
        )
    else:
        lines.append("- Too few problems with a rank difference for the paired test (< 6).")
    return lines


def _share(k: int, n: int) -> str:
    return f"{100 * k / n:.0f} %" if n else "–"


def _names(found: Sequence[Row]) -> str:
    return f"{len(found)} ({', '.join(r.problem for r in found)})" if found else "none"


def page(folder: str | Path) -> str:
    """The markdown page of a suite run's folder."""
    folder = Path(folder)
    stamp = provenance.read(folder) or {}
    runs = report.load(folder)
    found = rows(runs)
    samplers = list(dict.fromkeys([OURS, *RIVALS, *OTHERS, *(r.sampler for r in runs)]))
    samplers = [s for s in samplers if any(s in row.finals for row in found)]
    lines = [f"# Generalisation suite: {stamp.get('suite', suites.NAME)}", ""]
    lines += provenance.stamp(stamp) if stamp else []
    lines += [
        "Problems drawn by `mixbo_compare/suites.py` (seed "
        f"{suites.SEED}); decisions are made on the *tuning* part and reported on the "
        "*validation* part. Figures: median final regret over seeds (lower is better), or "
        "normalised hypervolume for multi-objective problems (marked ↑, higher is better). "
        "Win: mixbo's median at least as good as the better of TPE's and GPSampler's; p: "
        "two-sided Mann–Whitney U test against that baseline over seeds.",
        "",
    ]
    for part in suites.PARTS:
        mine = [r for r in found if r.part == part]
        if mine:
            lines += [f"## The {part} part ({len(mine)} problems)", "", *claims(mine), ""]
    header = ["part", "family", "problem", *samplers, "win", "p"]
    lines += ["## Per problem", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in found:
        win = {None: "–", True: "yes", False: "no"}[r.win()]
        p = r.p_value()
        name = r.problem + (" ↑" if r.sign < 0 else "")
        cells = [r.part, r.family, name, *(r.shown(s) for s in samplers), win]
        cells.append(fmt(p, 2) if math.isfinite(p) else "–")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    missing = [m.name for m in suites.members() if m.name not in {r.problem for r in found}]
    if stamp.get("suite") == suites.NAME and missing:
        lines += [f"Not yet run: {', '.join(missing)}.", ""]
    return "\n".join(lines)
