"""The multi-objective part of ``mixbo-compare``'s report: normalised hypervolume, the table, the
summary line against GP and TPE, the convergence and Pareto-front plots.

Definitions (also written into the report):

- each trial's noise-free objective vector is scaled by its problem's fixed ideal and nadir
  points (:mod:`mixbo_compare.hypervolume`), stored with every run (``normalisation``);
- **hypervolume after n trials**: that of the feasible non-dominated points among the first n
  completed trials, up to the reference point (1.1, ..., 1.1) in scaled coordinates; points at or
  beyond it add nothing. **Higher is better**: the best median is the highest, rank 1 the
  highest final hypervolume;
- where the true front's hypervolume is known, the fraction of it reached is given too.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mixbo_compare import run_data, verdict
from mixbo_compare.hypervolume import hypervolume_curve, non_dominated, normalise
from mixbo_compare.run_data import RunData
from mixbo_compare.stats import fmt, mean, median_iqr, ordered, ranks

OURS = "mixbo"
RIVALS = ("gp", "tpe")


def multi_objective_problems(runs: Iterable[RunData]) -> set[str]:
    """The problems among ``runs`` that are multi-objective: a run stored its normalisation, or
    the name says so (``mo-``; a problem whose runs all failed stored none), or a user's
    objective with several directions."""
    return {
        r.problem
        for r in runs
        if r.normalisation is not None
        or r.problem.startswith("mo-")
        or (r.directions is not None and len(r.directions) > 1)
    }


def shared_normalisation(runs: Sequence[RunData]) -> None:
    """Give the runs of a user's objective, which has no known front, the bounds of the
    non-dominated feasible points of all its runs together: ideal and nadir of that joint
    front, so each run's hypervolume measures how much of it the run reached."""
    problems = {r.problem for r in runs if r.directions and r.normalisation is None}
    for problem in problems:
        mine = [r for r in runs if r.problem == problem and len(r.objectives)]
        points = [r.objectives[r.feasible] for r in mine]
        stacked = np.concatenate(points) if points else np.empty((0, 0))
        stacked = stacked[np.all(np.isfinite(stacked), axis=1)] if stacked.size else stacked
        if not len(stacked):
            continue
        front = stacked[non_dominated(stacked)]
        ideal, nadir = front.min(axis=0), front.max(axis=0)
        nadir = np.where(nadir > ideal, nadir, ideal + np.maximum(np.abs(ideal), 1.0))
        norm = {
            "ideal": [float(v) for v in ideal],
            "nadir": [float(v) for v in nadir],
            "reference": 1.1,
            "optimal_hypervolume": None,
            "joint_front": True,
        }
        for r in runs:
            if r.problem == problem:
                r.normalisation = norm


def scaled_points(run: RunData) -> np.ndarray:
    """The run's trials in order of completion, scaled; infeasible and failed ones as NaN."""
    norm = run.normalisation or {}
    if not len(run.objectives) or not norm:
        return np.empty((0, 0))
    points = normalise(run.objectives, norm["ideal"], norm["nadir"])
    points[~run.feasible] = np.nan
    return points


def curve(run: RunData) -> np.ndarray:
    """Normalised hypervolume after each completed trial of ``run``."""
    points = scaled_points(run)
    if not points.size:
        return np.empty(0)
    return hypervolume_curve(points, (run.normalisation or {}).get("reference", 1.1))


@dataclass
class MOSetting(run_data.Setting):
    """All runs of one multi-objective problem with one number of workers, with their
    hypervolume curves and the problem's normalisation."""

    normalisation: dict | None

    def medians(self) -> dict[str, float]:
        return {s: median_iqr(by_seed.values())[0] for s, by_seed in self.finals().items()}


def group(runs: Sequence[RunData]) -> list[MOSetting]:
    """The runs by (problem, workers), with their hypervolume curves."""
    shared_normalisation(runs)
    settings = []
    for base, mine in run_data.settings(runs, ordered(r.problem for r in runs), curve):
        norm = next((r.normalisation for r in mine if r.normalisation), None)
        settings.append(MOSetting(**vars(base), normalisation=norm))
    return settings


# ------------------------------------------------------------------------------------ summary
def wins(
    medians: dict[str, dict[str, float]],
    ours: str = OURS,
    rivals: Sequence[str] = RIVALS,
    single: str = "tpe",
    higher_is_better: bool = True,
) -> str:
    """The summary line: on how many problems ``ours``'s median is at least as good as the better
    of ``rivals``' medians, and as ``single``'s (``medians[problem][sampler]``).

    A problem counts where ``ours``, every rival and ``single`` have a median;
    ``higher_is_better`` says which way "good" points (hypervolume: higher; regret: lower).
    """
    better = max if higher_is_better else min

    def at_least(a: float, b: float) -> bool:
        return a >= b if higher_is_better else a <= b

    def name(sampler: str) -> str:
        return sampler.upper() if sampler in ("gp", "tpe") else sampler

    rivals_named = " and ".join(map(name, rivals))
    counted = [
        p
        for p, meds in medians.items()
        if all(math.isfinite(meds.get(s, math.nan)) for s in (ours, *rivals, single))
    ]
    if not counted:
        everyone = ", ".join(map(name, dict.fromkeys((ours, *rivals, single))))
        return f"{ours} against {rivals_named}: no problem has results from each of {everyone}."
    both = sum(at_least(medians[p][ours], better(medians[p][r] for r in rivals)) for p in counted)
    alone = sum(at_least(medians[p][ours], medians[p][single]) for p in counted)
    n = len(counted)
    return (
        f"{ours} ≥ better of {rivals_named} on {both} of {n}; ≥ {name(single)} on {alone} of {n} "
        f"(median final {'hypervolume, higher' if higher_is_better else 'value, lower'} is "
        "better)."
    )


def _cell(curves: list[np.ndarray]) -> tuple[float, str]:
    med, q1, q3 = median_iqr(c[-1] if len(c) else math.nan for c in curves)
    if not math.isfinite(med):
        return med, "–"
    return med, f"{fmt(med)} [{fmt(q1)}, {fmt(q3)}]"


def section(runs: Sequence[RunData], classes: dict[str, str]) -> list[str]:
    """The report's lines for multi-objective runs (``classes``: what each sampler name runs)."""
    settings = group(runs)
    samplers = ordered(r.sampler for r in runs)
    ours = {r.sampler for r in runs if r.mixbo}
    lines = [
        "## Multi-objective problems",
        "",
        run_data.what_ran(runs, ordered(s.problem for s in settings), samplers, ours),
        "",
        "- Samplers in bold are mixbo's; "
        + ", ".join(f"{s} = {classes[s]}" for s in samplers if s in classes)
        + " (Optuna's defaults).",
        "- Hypervolume after n trials: each objective (minimised) scaled by the problem's fixed "
        "ideal and nadir points to (f − ideal) / (nadir − ideal); the hypervolume of the feasible "
        "non-dominated points among the first n completed trials up to the reference point "
        "(1.1, 1.1) in these coordinates (points beyond it add nothing). Noise-free values "
        "(tabular problems: means over training seeds). **Higher is better.**",
        "- Cells: median final hypervolume over seeds [first quartile, third quartile]; the "
        "highest median of each problem in bold. Mean rank: rank of the final hypervolume among "
        "the samplers on the same problem and seed (1 = highest), averaged.",
        "",
    ]
    for workers in sorted({s.workers for s in settings}):
        these = [s for s in settings if s.workers == workers]
        lines += _summary(these, samplers, ours, workers)
        items = [  # the verdict ranks minimised figures: the hypervolume negated
            (
                st.problem,
                {s: {k: -v for k, v in f.items()} for s, f in st.finals().items()},
                {s: [-c for c in cs] for s, cs in st.curves.items()},
            )
            for st in these
        ]
        title = "1 worker, sequential" if workers == 1 else f"{workers} simulated workers"
        lines += [
            f"#{line}" if line.startswith("## ") else line
            for line in verdict.section(items, f"hypervolume, {title}")
        ]
    lines += ["### Per problem", ""]
    for st in settings:
        lines += _per_problem(st)
    return lines


def _summary(
    settings: list[MOSetting], samplers: list[str], ours: set[str], workers: int
) -> list[str]:
    title = "1 worker, sequential" if workers == 1 else f"{workers} simulated workers"
    header = ["sampler"] + [s.problem for s in settings] + ["mean rank", "s/suggestion"]
    lines = [f"### Summary: normalised hypervolume, {title}", ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    all_ranks: dict[str, list[float]] = {s: [] for s in samplers}
    best = {}
    for st in settings:
        negated = {s: {k: -v for k, v in f.items()} for s, f in st.finals().items()}
        for s, rs in ranks(negated).items():
            all_ranks[s] += rs
        finite = [m for m in st.medians().values() if math.isfinite(m)]
        best[st.problem] = max(finite) if finite else math.nan
    for s in samplers:
        row = [f"**{s}**" if s in ours else s]
        for st in settings:
            if s in st.skipped:
                row.append("skipped")
            elif s not in st.samplers or not st.runs[s]:
                row.append("failed" if st.failed.get(s) else "–")
            else:
                med, text = _cell(st.curves[s])
                row.append(f"**{text}**" if med == best[st.problem] else text)
        spent = mean(r.seconds_per_suggestion for st in settings for r in st.runs.get(s, []))
        row += [fmt(mean(all_ranks[s]), 2), fmt(spent, 2)]
        lines.append("| " + " | ".join(row) + " |")
    medians = {st.problem: st.medians() for st in settings}
    lines += ["", wins(medians), ""]
    plots = [f"`convergence_hypervolume_k{workers}.png`", f"`pareto_front_k{workers}.png`"]
    lines += ["Plots: " + ", ".join(plots) + ".", ""]
    return lines


def _per_problem(st: MOSetting) -> list[str]:
    lines = [f"#### {st.problem}", ""]
    norm = st.normalisation
    optimum = norm.get("optimal_hypervolume") if norm else None
    if norm and norm.get("joint_front"):
        lines += [
            "Your objective has no known front: ideal "
            f"{_vector(norm['ideal'])} and nadir {_vector(norm['nadir'])} are those of the "
            "feasible non-dominated points of all runs together (objectives to maximise are "
            "negated), reference 1.1 in scaled coordinates.",
            "",
        ]
    elif norm:
        lines += [
            f"Ideal {_vector(norm['ideal'])}, nadir {_vector(norm['nadir'])}, reference "
            f"{norm['reference']} in scaled coordinates; the true front's hypervolume: "
            + (f"{optimum:.6g}." if optimum is not None else "not known."),
            "",
        ]
    header = ["sampler", "runs", "median", "IQR"]
    header += ["median / optimum"] if optimum else []
    header += ["mean rank", "s/suggestion"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    negated = {s: {k: -v for k, v in f.items()} for s, f in st.finals().items()}
    rank = ranks(negated)
    for s in st.samplers:
        if s in st.skipped:
            lines.append(f"| {s} | skipped: {st.skipped[s]} |" + " |" * (len(header) - 2))
            continue
        n_ok, n_failed = len(st.runs[s]), len(st.failed.get(s, []))
        med, q1, q3 = median_iqr(c[-1] if len(c) else math.nan for c in st.curves[s])
        runs = f"{n_ok}" + (f" ({n_failed} failed)" if n_failed else "")
        cells = [s, runs, fmt(med), f"{fmt(q1)} – {fmt(q3)}" if math.isfinite(med) else "–"]
        if optimum:
            cells.append(fmt(med / optimum) if math.isfinite(med) else "–")
        spent = mean(r.seconds_per_suggestion for r in st.runs[s])
        cells += [fmt(mean(rank.get(s, [])), 2), fmt(spent, 2)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    failures = [(s, r) for s, bad in st.failed.items() for r in bad]
    for s, r in failures:
        first = (r.error or "unknown error").strip().splitlines()[-1][:300]
        lines.append(f"- {s} failed on seed {r.seed}: {first}")
    if failures:
        lines.append("")
    return lines


def _vector(values: Sequence[float]) -> str:
    return "(" + ", ".join(f"{v:.6g}" for v in values) + ")"


# ------------------------------------------------------------------------------------ plots
def median_seed_run(runs: list[RunData], curves: list[np.ndarray]) -> RunData | None:
    """The run whose final hypervolume is the median of the seeds' (the lower middle one for an
    even number of seeds)."""
    pairs = zip(runs, curves, strict=True)
    finals = [(float(c[-1]) if len(c) else -math.inf, r.seed, r) for r, c in pairs]
    if not finals:
        return None
    finals.sort(key=lambda t: (t[0], t[1]))
    return finals[(len(finals) - 1) // 2][2]


def plot(runs: Sequence[RunData], folder: str | Path, dpi: int = 110) -> list[Path]:
    """``convergence_hypervolume_k<k>.png`` (median and IQR of the hypervolume against trials)
    and ``pareto_front_k<k>.png`` (the median seed's final feasible non-dominated points per
    sampler, scaled, on the two-objective problems)."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    settings = group(runs)
    samplers = ordered(r.sampler for r in runs)
    ours = {r.sampler for r in runs if r.mixbo}
    colors = {s: colormaps["tab10"](i % 10) for i, s in enumerate(samplers)}
    written = []
    for workers in sorted({s.workers for s in settings}):
        these = [s for s in settings if s.workers == workers]
        for kind in ("convergence_hypervolume", "pareto_front"):
            shown = these if kind == "convergence_hypervolume" else [s for s in these if _two(s)]
            if not shown:
                continue
            ncols = min(len(shown), 3)
            nrows = math.ceil(len(shown) / ncols)
            fig = Figure(figsize=(max(5.2 * ncols, 6.6), 4.0 * nrows + 1.2), layout="constrained")
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            handles: dict = {}
            for ax, st in zip(axes, shown, strict=False):
                if kind == "convergence_hypervolume":
                    _convergence(ax, st, colors, ours, handles)
                else:
                    _front(ax, st, colors, ours, handles)
            for ax in axes[len(shown) :]:
                ax.set_visible(False)
            n_seeds = len({r.seed for st in shown for rs in st.runs.values() for r in rs})
            fig.suptitle(
                f"Normalised hypervolume (higher is better), median over {n_seeds} seeds, "
                "band = interquartile range"
                if kind == "convergence_hypervolume"
                else "Final feasible non-dominated points of the median seed (scaled objectives, "
                "minimised; dotted: the reference box)",
                fontsize=12,
            )
            fig.legend(
                [handles[s] for s in samplers if s in handles],
                [f"{s} (ours)" if s in ours else s for s in samplers if s in handles],
                loc="outside lower center",
                ncol=min(max(len(handles), 1), 6),
                fontsize=11,
                frameon=False,
            )
            path = Path(folder) / f"{kind}_k{workers}.png"
            fig.savefig(path, dpi=dpi)
            written.append(path)
    return written


def _two(st: MOSetting) -> bool:
    return bool(st.normalisation) and len(st.normalisation["ideal"]) == 2


def _convergence(ax, st: MOSetting, colors, ours: set[str], handles: dict) -> None:
    for s in st.samplers:
        curves = [c for c in st.curves[s] if len(c)]
        if not curves:
            continue
        n = max(len(c) for c in curves)
        stack = np.array([np.pad(c, (0, n - len(c)), mode="edge") for c in curves])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            q1, med, q3 = np.nanpercentile(stack, [25, 50, 75], axis=0)
        x = np.arange(1, n + 1)
        style = {"lw": 2.4, "ls": "-"} if s in ours else {"lw": 1.6, "ls": "--"}
        (line,) = ax.plot(x, med, color=colors[s], **style)
        ax.fill_between(x, q1, q3, color=colors[s], alpha=0.18, lw=0)
        handles[s] = line
    optimum = (st.normalisation or {}).get("optimal_hypervolume")
    if optimum:
        ax.axhline(optimum, color="black", lw=1, ls=":", label="true front")
    ax.set_title(st.problem + (" (dotted: true front)" if optimum else ""), fontsize=12)
    ax.set_xlabel("completed trials", fontsize=11)
    ax.set_ylabel("normalised hypervolume", fontsize=11)
    ax.grid(True, alpha=0.3)


def _front(ax, st: MOSetting, colors, ours: set[str], handles: dict) -> None:
    reference = (st.normalisation or {}).get("reference", 1.1)
    for s in st.samplers:
        run = median_seed_run(st.runs[s], st.curves[s])
        if run is None:
            continue
        points = scaled_points(run)
        points = points[np.all(np.isfinite(points), axis=1)]
        points = points[np.all(points < reference, axis=1)]
        if not len(points):
            continue
        points = points[non_dominated(points)]
        points = points[np.argsort(points[:, 0])]
        # the attained front as a staircase
        x = np.repeat(points[:, 0], 2)[1:]
        y = np.repeat(points[:, 1], 2)[:-1]
        style = {"lw": 2.0, "ls": "-"} if s in ours else {"lw": 1.3, "ls": "--"}
        (line,) = ax.plot(x, y, color=colors[s], **style)
        ax.scatter(points[:, 0], points[:, 1], color=colors[s], s=18, zorder=3)
        handles[s] = line
    ax.plot([0, reference, reference], [reference, reference, 0], color="black", lw=1, ls=":")
    ax.set_xlim(-0.03, reference + 0.05)
    ax.set_ylim(-0.03, reference + 0.05)
    ax.set_title(st.problem, fontsize=12)
    ax.set_xlabel("objective 1 (scaled)", fontsize=11)
    ax.set_ylabel("objective 2 (scaled)", fontsize=11)
    ax.grid(True, alpha=0.3)
