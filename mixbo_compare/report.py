"""The results of ``mixbo-compare``: regret curves, the markdown table and the convergence plots.

Everything here is computed from the two CSV files the command writes (``runs.csv``, one row per
(problem, sampler, seed, workers) run; ``trials.csv``, one row per trial), so a report can be
rebuilt from a results folder alone (``mixbo-compare --report-only DIR``).

Definitions (also written into the table's header):

- **value** of a trial: its noise-free value where the problem has one (tabular benchmarks: the
  configuration's mean over training seeds), else the observed value.
- **reference** of a problem: its optimum (or best-known value); where none is known, or where some
  run beat it, the best value seen across all runs of that problem.
- **regret** after n trials: the best value among the first n completed trials, minus the reference.
- **final regret**: the regret after the last trial; the table gives its median and interquartile
  range over seeds, and the **mean rank** of each sampler among the samplers run on the same
  problem, seed and number of workers (1 = lowest final regret, ties share the average rank).
- a user's own objective (``--objective``) has no known optimum: it is reported by the **best
  value** found, in its own direction (maximised objectives: higher is better).
- the **verdict** (:mod:`mixbo_compare.verdict`): each sampler against the best other, with its
  wins over seeds, a rank test's p-value and the trials it needed to reach the best median.

Multi-objective problems are reported by :mod:`mixbo_compare.report_mo` (normalised
hypervolume, higher is better), in a section of their own after these.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mixbo_compare import provenance, report_mo, run_data, verdict
from mixbo_compare.run_data import (  # noqa: F401  (re-exported: the report's data)
    RUN_COLUMNS,
    RUNS_CSV,
    TRIAL_COLUMNS,
    TRIALS_CSV,
    RunData,
    load,
)
from mixbo_compare.stats import fmt as _g
from mixbo_compare.stats import mean as _mean
from mixbo_compare.stats import median_iqr, ranks  # noqa: F401  (re-exported)
from mixbo_compare.stats import ordered as _ordered

# what each name of ``mixbo-compare -s`` runs (mixbo's samplers and Optuna's)
SAMPLER_CLASSES = {
    "mixbo": "MixboSampler",
    "cocabo": "CoCaBOSampler",
    "casmopolitan": "CasmopolitanSampler",
    "bofm": "BOFMSampler",
    "tpe": "TPESampler",
    "tpe-cl": "TPESampler(constant_liar=True)",
    "tpe-group": "TPESampler(multivariate=True, group=True)",
    "gp": "GPSampler",
    "random": "RandomSampler",
    "cmaes": "CmaEsSampler",
    "nsga2": "NSGAIISampler",
}
TABLE_MD = "results.md"

# A value at most this far (relative) below the stated optimum counts as reaching it.
OPTIMUM_TOLERANCE = 1e-6
# A panel uses a log axis when its regrets span more than this ratio.
LOG_SPAN = 100.0


# ------------------------------------------------------------------------------------ the maths
def best_so_far(values: np.ndarray) -> np.ndarray:
    """Running minimum that skips NaN (failed trials); NaN until the first finite value."""
    return np.fmin.accumulate(np.asarray(values, dtype=float)) if len(values) else np.empty(0)


def reference(optimum: float | None, best_seen: float) -> tuple[float, str]:
    """The value regret is measured from, and a note saying which one it is.

    The problem's optimum when it is known and no run beat it (by more than a relative
    ``OPTIMUM_TOLERANCE``); otherwise the best value seen across all runs.
    """
    if optimum is None:
        return best_seen, (
            f"no known optimum: regret against the best value seen in all runs ({best_seen:.6g})"
        )
    if math.isfinite(best_seen) and best_seen < optimum - OPTIMUM_TOLERANCE * max(1, abs(optimum)):
        return best_seen, (
            f"a run beat the stated optimum {optimum:.7g}: regret against the best value seen "
            f"in all runs ({best_seen:.7g})"
        )
    return optimum, f"optimum {optimum:.7g}"


def regret_curve(true_values: np.ndarray, ref: float) -> np.ndarray:
    """Regret after each completed trial (never below 0; NaN before the first success)."""
    return np.maximum(best_so_far(true_values) - ref, 0.0)


def on_time_grid(end_times: np.ndarray, regrets: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Regret as a step function of simulated time: the value after the last completion <= t."""
    idx = np.searchsorted(end_times, grid, side="right") - 1
    out = np.full(len(grid), np.nan)
    ok = idx >= 0
    out[ok] = regrets[idx[ok]]
    return out


# ------------------------------------------------------------------------------------ grouping
@dataclass
class Setting(run_data.Setting):
    """All runs of one problem with one number of workers, with their regret curves, measured
    from ``reference`` (``note`` says what it is).

    A user's objective (``by_value``) has curves of the best value so far, minimised, from a
    reference of 0; ``sign`` turns a figure back into the user's direction (-1: maximised)."""

    reference: float
    note: str
    by_value: bool = False
    sign: float = 1.0

    def shown(self, x: float) -> float:
        """A figure as the page shows it: a regret, or a best value in the user's direction."""
        return self.sign * x if math.isfinite(x) else x

    @property
    def figure(self) -> str:
        return "best value" if self.by_value else "regret"


def group(runs: Sequence[RunData]) -> list[Setting]:
    """Group runs by (problem, workers) and compute each problem's reference and regret curves."""
    best: dict[str, float] = {}
    optimum: dict[str, float | None] = {}
    for r in runs:
        if r.status == "ok" and len(r.true_values) and np.isfinite(r.true_values).any():
            best[r.problem] = min(best.get(r.problem, math.inf), float(np.nanmin(r.true_values)))
        if r.optimum is not None:
            optimum[r.problem] = r.optimum
    directions = {r.problem: r.directions for r in runs if r.directions}
    refs = {
        p: reference(optimum.get(p), best.get(p, math.nan))
        if p not in directions
        else (0.0, f"your objective, no known optimum: the best value found ({directions[p][0]})")
        for p in _ordered(r.problem for r in runs)
    }

    def curve(r: RunData) -> np.ndarray:
        if r.problem in directions:
            return best_so_far(r.true_values)
        return regret_curve(r.true_values, refs[r.problem][0])

    settings = []
    for base, _ in run_data.settings(runs, refs, curve):
        ref, note = refs[base.problem]
        by_value = base.problem in directions
        sign = -1.0 if by_value and directions[base.problem][0] == "maximize" else 1.0
        settings.append(
            Setting(**vars(base), reference=ref, note=note, by_value=by_value, sign=sign)
        )
    return settings


# ------------------------------------------------------------------------------------ the table
def _cell(curves: list[np.ndarray], st: Setting | None = None) -> tuple[float, str]:
    """The median final figure (minimised) of ``curves``, and its cell as ``st`` shows it:
    median [first quartile, third quartile]."""
    med, q1, q3 = median_iqr(c[-1] if len(c) else math.nan for c in curves)
    if not math.isfinite(med):
        return med, "–"
    if st is not None and st.sign < 0:  # a maximised objective: its quartiles swap
        return med, f"{_g(st.shown(med))} [{_g(st.shown(q3))}, {_g(st.shown(q1))}]"
    return med, f"{_g(med)} [{_g(q1)}, {_g(q3)}]"


def table(runs: Sequence[RunData], stamp: dict | None = None, note: str = "") -> str:
    """The markdown report: where the runs came from (``stamp``, a folder's provenance), a
    summary per number of workers, then one table per problem; multi-objective problems
    (:mod:`mixbo_compare.report_mo`) in a section of their own."""
    multi = report_mo.multi_objective_problems(runs)
    single = [r for r in runs if r.problem not in multi]
    lines = ["# mixbo-compare results", ""]
    if stamp:
        lines += provenance.stamp(stamp)
    if note:
        lines += [note, ""]
    if not single and not multi:
        return "\n".join([*lines, "No runs.", ""])
    if single:
        lines += _single_objective(single)
    if multi:
        lines += report_mo.section([r for r in runs if r.problem in multi], SAMPLER_CLASSES)
    return "\n".join(lines)


def _single_objective(runs: Sequence[RunData]) -> list[str]:
    """The report's lines for single-objective runs (regret, lower is better)."""
    settings = group(runs)
    lines: list[str] = []
    problems = _ordered(s.problem for s in settings)
    samplers = _ordered(r.sampler for r in runs)
    ours = {r.sampler for r in runs if r.mixbo}
    lines += [
        run_data.what_ran(runs, problems, samplers, ours),
        "",
        "- Samplers in bold are mixbo's; each name is `mixbo-compare -s NAME`'s: "
        + ", ".join(f"{s} = {SAMPLER_CLASSES[s]}" for s in samplers if s in SAMPLER_CLASSES)
        + ".",
        "- Regret after n trials = best value among the first n completed trials − the problem's "
        "reference (its optimum or best-known value; see each problem's note). For noisy tabular "
        "problems a trial's value is its noise-free mean over training seeds.",
        "- Cells: median final regret over seeds [first quartile, third quartile]; the best "
        "median of each problem in bold."
        + (
            " For your own objectives ("
            + ", ".join(
                f"{s.problem}, {'higher' if s.sign < 0 else 'lower'} is better"
                for s in _ordered_by_problem(settings)
                if s.by_value
            )
            + ") the cells are the best value found, in the objective's own units."
            if any(s.by_value for s in settings)
            else ""
        ),
        "- Mean rank: rank of the final regret among the samplers run on the same problem and "
        "seed (1 = best; ties share the average), averaged over seeds (and problems in the "
        "summary).",
        "- s/suggestion: mean wall-clock seconds of one `study.ask` on this machine.",
        "- Asynchronous runs (k > 1 workers) are simulated: trial runtimes are half-normal with "
        "mean 1, k trials stay RUNNING, no real waiting; simulated time is in units of the mean "
        "trial runtime.",
        "",
    ]
    for workers in sorted({s.workers for s in settings}):
        these = [s for s in settings if s.workers == workers]
        lines += _summary(these, samplers, ours, workers)
        lines += verdict_section(these, workers)
    lines += equal_steps_section(settings)
    lines += ["## Per problem", ""]
    for s in settings:
        lines += _per_problem(s)
    return lines


def equal_steps_section(settings: list[Setting]) -> list[str]:
    """The regret at equal total steps (compute) of the problems whose trials report steps: each
    run's best value among the trials that ended within the smallest total any run of that
    problem used (median [IQR] over seeds)."""
    stepped = [st for st in settings if any(_has_steps(r) for rs in st.runs.values() for r in rs)]
    if not stepped:
        return []
    samplers = _ordered(s for st in stepped for s in st.samplers)
    lines = [
        "## At equal total steps",
        "",
        "Regret of the best value among the trials that ended within a budget of steps (for "
        "your own objective, that best value): the smallest total any run of the problem used "
        "(in the last row), so that every sampler gets the same compute; median [first "
        "quartile, third quartile] over seeds.",
        "",
    ]
    header = ["sampler"] + [st.problem for st in stepped]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    budgets = {
        st.problem: min(float(np.nansum(r.steps)) for rs in st.runs.values() for r in rs)
        for st in stepped
    }
    for s in samplers:
        row = [s]
        for st in stepped:
            finals = []
            for r in st.runs.get(s, []):
                within = np.cumsum(np.nan_to_num(r.steps)) <= budgets[st.problem]
                values = r.true_values[within]
                best = np.nanmin(values) if np.isfinite(values).any() else math.nan
                if st.by_value:
                    finals.append(best)
                else:
                    finals.append(max(best - st.reference, 0.0) if math.isfinite(best) else best)
            curves = [np.array([f]) for f in finals]
            row.append(_cell(curves, st)[1])
        lines.append("| " + " | ".join(row) + " |")
    lines.append(
        "| budget (steps) | " + " | ".join(f"{budgets[st.problem]:.0f}" for st in stepped) + " |"
    )
    lines.append("")
    return lines


def _ordered_by_problem(settings: Sequence[Setting]) -> list[Setting]:
    """One setting per problem, in order (the first number of workers)."""
    seen: dict[str, Setting] = {}
    for st in settings:
        seen.setdefault(st.problem, st)
    return list(seen.values())


def verdict_section(settings: Sequence[Setting], workers: int) -> list[str]:
    """The verdict of each problem (:func:`mixbo_compare.verdict.section`)."""
    items = [(st.problem, st.finals(), st.curves) for st in settings]
    return verdict.section(items, _workers_title(workers))


def _has_steps(run: RunData) -> bool:
    return bool(len(run.steps) and np.nansum(run.steps) > 0)


def _workers_title(workers: int) -> str:
    if workers == 1:
        return "1 worker, sequential"
    return f"{workers} simulated asynchronous workers"


def _summary(
    settings: list[Setting], samplers: list[str], ours: set[str], workers: int
) -> list[str]:
    header = ["sampler"] + [s.problem for s in settings] + ["mean rank", "s/suggestion"]
    lines = [f"## Summary: {_workers_title(workers)}", ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    all_ranks = {s: [] for s in samplers}
    medians = {}
    for st in settings:
        for s, rs in ranks(st.finals()).items():
            all_ranks[s] += rs
        meds = {s: _cell(st.curves[s])[0] for s in st.samplers if st.runs[s]}
        finite = [m for m in meds.values() if math.isfinite(m)]
        medians[st.problem] = (meds, min(finite) if finite else math.nan)
    footnotes = []
    for s in samplers:
        row = [f"**{s}**" if s in ours else s]
        missing = 0
        for st in settings:
            if s in st.skipped:
                row.append("skipped")
                missing += 1
            elif s not in st.samplers or not st.runs[s]:
                row.append("failed" if st.failed.get(s) else "–")
                missing += 1
            else:
                med, text = _cell(st.curves[s], st)
                best = medians[st.problem][1]
                row.append(f"**{text}**" if math.isfinite(med) and med == best else text)
        spent = _mean(r.seconds_per_suggestion for st in settings for r in st.runs.get(s, []))
        row += [_g(_mean(all_ranks[s]), 2), _g(spent, 2)]
        if 0 < missing < len(settings):
            footnotes.append(
                f"{s}: mean rank over the {len(settings) - missing} problem(s) where it ran"
            )
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    if footnotes:
        lines += [
            "Mean ranks over different sets of problems are not comparable: "
            + "; ".join(footnotes)
            + ".",
            "",
        ]
    problems_by_reason: dict[tuple[str, str], list[str]] = {}
    for st in settings:
        for s, why in st.skipped.items():
            problems_by_reason.setdefault((s, why), []).append(st.problem)
    skipped = sorted(  # one entry per sampler and reason, however many problems it skipped
        f"{s} on {', '.join(problems)} ({why})" for (s, why), problems in problems_by_reason.items()
    )
    if skipped:
        lines += ["Skipped: " + "; ".join(skipped) + ".", ""]
    pngs = [f"`convergence_trials_k{workers}.png`"]
    if workers > 1:
        pngs.append(f"`convergence_time_k{workers}.png`")
    lines += ["Plots: " + ", ".join(pngs) + ".", ""]
    return lines


def _per_problem(st: Setting) -> list[str]:
    lines = [f"### {st.problem}, {_workers_title(st.workers)}", "", f"Reference: {st.note}.", ""]
    header = ["sampler", "runs", "median", "IQR", "mean rank", "s/suggestion"]
    if st.by_value:
        header[2:4] = ["median best value", "IQR"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    rank = ranks(st.finals())
    for s in st.samplers:
        if s in st.skipped:
            lines.append(f"| {s} | skipped: {st.skipped[s]} | | | | |")
            continue
        n_ok, n_failed = len(st.runs[s]), len(st.failed.get(s, []))
        med, q1, q3 = median_iqr(c[-1] if len(c) else math.nan for c in st.curves[s])
        spent = _mean(r.seconds_per_suggestion for r in st.runs[s])
        runs = f"{n_ok}" + (f" ({n_failed} failed)" if n_failed else "")
        med, q1, q3 = st.shown(med), *sorted((st.shown(q1), st.shown(q3)))
        iqr = f"{_g(q1)} – {_g(q3)}" if math.isfinite(med) else "–"
        lines.append(
            f"| {s} | {runs} | {_g(med)} | {iqr} | {_g(_mean(rank.get(s, [])), 2)} "
            f"| {_g(spent, 2)} |"
        )
    lines.append("")
    for s, bad in st.failed.items():
        for r in bad:
            first = (r.error or "unknown error").strip().splitlines()[-1][:300]
            lines.append(f"- {s} failed on seed {r.seed}: {first}")
    if any(st.failed.values()):
        lines.append("")
    return lines


# ------------------------------------------------------------------------------------ the plots
def _quartiles(curves: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = max(len(c) for c in curves)
    stack = np.full((len(curves), n), np.nan)
    for i, c in enumerate(curves):
        stack[i, : len(c)] = c
        if 0 < len(c) < n:  # a shorter run keeps its last regret
            stack[i, len(c) :] = c[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns before any success
        q1, med, q3 = np.nanpercentile(stack, [25, 50, 75], axis=0)
    return med, q1, q3


def use_log_scale(values: Iterable[np.ndarray]) -> bool:
    """Whether the positive finite values span more than ``LOG_SPAN`` (a factor of 100)."""
    pos = np.concatenate([np.asarray(v, dtype=float).ravel() for v in values] or [np.empty(0)])
    pos = pos[np.isfinite(pos) & (pos > 0)]
    return bool(len(pos) and pos.max() / pos.min() > LOG_SPAN)


def _colors(samplers: list[str]) -> dict[str, tuple[float, ...]]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return {s: cmap(i % 10) for i, s in enumerate(samplers)}


def plot(runs: Sequence[RunData], folder: str | Path, dpi: int = 110) -> list[Path]:
    """Write the convergence PNGs (per number of workers: against trials; k > 1: against time);
    for multi-objective problems, :func:`mixbo_compare.report_mo.plot`'s."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    multi = report_mo.multi_objective_problems(runs)
    written = report_mo.plot([r for r in runs if r.problem in multi], folder, dpi)
    runs = [r for r in runs if r.problem not in multi]
    settings = group(runs)
    samplers = _ordered(r.sampler for r in runs)
    ours = {r.sampler for r in runs if r.mixbo}
    colors = _colors(samplers)
    for workers in sorted({s.workers for s in settings}):
        these = [s for s in settings if s.workers == workers]
        axes_kinds = ["trials"] + (["time"] if workers > 1 else [])
        for kind in axes_kinds:
            n = len(these)
            ncols = min(n, 3)
            nrows = math.ceil(n / ncols)
            width = max(5.2 * ncols, 6.6)  # room for the title when there is one panel
            fig = Figure(figsize=(width, 4.0 * nrows + 1.2), layout="constrained")
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            handles = {}
            for ax, st in zip(axes, these, strict=False):
                _panel(ax, st, kind, colors, ours, handles)
            for ax in axes[n:]:
                ax.set_visible(False)
            n_seeds = len({r.seed for st in these for rs in st.runs.values() for r in rs})
            figure = "regret" if not any(st.by_value for st in these) else "value"
            if figure == "value" and not all(st.by_value for st in these):
                figure = "regret (best value for your objectives)"
            fig.suptitle(
                f"Best-so-far {figure}, {_workers_title(workers)}\n"
                f"median over {n_seeds} seeds, band = interquartile range",
                fontsize=12,
            )
            fig.legend(
                [handles[s] for s in samplers if s in handles],
                [f"{s} (ours)" if s in ours else s for s in samplers if s in handles],
                loc="outside lower center",
                ncol=max(1, min(len(handles), 6)),  # no handles: no run succeeded
                fontsize=11,
                frameon=False,
            )
            path = Path(folder) / f"convergence_{kind}_k{workers}.png"
            fig.savefig(path, dpi=dpi)
            written.append(path)
    return written


def _panel(ax, st: Setting, kind: str, colors, ours: set[str], handles: dict) -> None:
    bands = {}
    for s in st.samplers:
        pairs = [(r, c) for r, c in zip(st.runs[s], st.curves[s], strict=True) if len(c)]
        if not pairs:
            continue
        curves = [c for _, c in pairs]
        if kind == "trials":
            x = np.arange(1, max(len(c) for c in curves) + 1)
            med, q1, q3 = _quartiles(curves)
        else:
            ends = [r.end_times for r, _ in pairs]
            horizon = max(float(np.nanmax(e)) for e in ends if len(e))
            x = np.linspace(0.0, horizon, 400)
            gridded = [on_time_grid(e, c, x) for e, c in zip(ends, curves, strict=True)]
            med, q1, q3 = _quartiles(gridded)
            defined = np.all(np.isfinite(np.vstack(gridded)), axis=0)
            med, q1, q3 = (np.where(defined, a, np.nan) for a in (med, q1, q3))
        bands[s] = (x, med, q1, q3)
    if st.by_value:  # the best value in the objective's own direction
        bands = {s: (x, *(st.sign * a for a in rest)) for s, (x, *rest) in bands.items()}
    log = use_log_scale(a for x, *rest in bands.values() for a in rest)
    if st.by_value:  # values, not regrets: a log axis only when all are positive
        shown = np.concatenate([a for _, *rest in bands.values() for a in rest] or [np.empty(0)])
        log = log and bool((shown[np.isfinite(shown)] > 0).all())
    floor, zeros = 0.0, False
    if log:  # zero regret (optimum reached) cannot be drawn on a log axis: put it at the floor
        every = np.concatenate([np.concatenate(rest) for _, *rest in bands.values()])
        every = every[np.isfinite(every)]
        floor = float(every[every > 0].min()) / 10.0
        zeros = bool((every <= 0).any())
    for s, (x, med, q1, q3) in bands.items():
        if log:
            med, q1, q3 = (np.where(a > 0, a, floor) for a in (med, q1, q3))
        mine = s in ours
        style = (
            {"lw": 2.4, "ls": "-", "zorder": 4} if mine else {"lw": 1.6, "ls": "--", "zorder": 3}
        )
        (line,) = ax.plot(x, med, color=colors[s], **style)
        ax.fill_between(x, q1, q3, color=colors[s], alpha=0.18, lw=0, zorder=style["zorder"] - 2)
        handles[s] = line
    if log:
        ax.set_yscale("log")
    elif bands and not st.by_value:  # linear: the whole of every band is shown
        top = max(float(np.nanmax(q3)) for _, _, _, q3 in bands.values())
        if math.isfinite(top) and top > 0:
            ax.set_ylim(-0.03 * top, 1.08 * top)
    best_seen = st.note.startswith(("no known", "a run beat"))
    if st.by_value:
        best_seen = False
    ax.set_title(st.problem + (" (regret vs best value seen)" if best_seen else ""), fontsize=12)
    ax.set_xlabel(
        "completed trials" if kind == "trials" else "simulated time (mean trial runtimes)",
        fontsize=11,
    )
    label = f"best value ({'higher' if st.sign < 0 else 'lower'} is better)"
    ax.set_ylabel(
        label if st.by_value else "regret" + (" (0 drawn at the bottom)" if zeros else ""),
        fontsize=11,
    )
    ax.tick_params(labelsize=10)
    ax.grid(True, which="major", alpha=0.3)
    if not bands:
        ax.text(0.5, 0.5, "no successful runs", ha="center", va="center", transform=ax.transAxes)


def write_report(folder: str | Path, note: str = "") -> tuple[Path, list[Path]]:
    """Rebuild ``results.md`` and the PNGs of a results folder from its CSV files (stamped with
    its ``provenance.json``)."""
    folder = Path(folder)
    runs = load(folder)
    md = folder / TABLE_MD
    md.write_text(table(runs, provenance.read(folder), note))
    return md, plot(runs, folder)
