"""Ackley-5C's one-category-off plateau: how often each sampler reaches it, fixes it, and how.

Ackley-5C's optimum is category 8 of 0–16 in each of its five categoricals and 0 in its float.
Runs on it split between that optimum and configurations with one category wrong; this reads
``mixbo-compare`` runs (its ``runs.jsonl``) and prints, per sampler: how many runs reach a
configuration with exactly one category wrong, how many then reach the optimum's categories by the
end of the run, the single-category tries before the fix, the trials spent keeping the
incumbent's categories (moving only the float) in between, and how many of its single-category
trials changed the wrong variable and how many a right one.

With ``--rank SAMPLER ...``, each of those samplers' runs is refitted up to the trial that first
reaches the plateau (where that is its best so far), and two ranks among the incumbent's unseen
single-category neighbours by log EI are printed, under ``MixboSampler``'s model (its kernel and
warping choice) and under CoCaBO's additive overlap kernel, where a category's effect is shared by
every configuration: the fix's, and the wrong variable's (its best-scored change of the one wrong
categorical, whatever the value). The second says whether a model has found which variable to
change; ranking another sampler's runs under the same models separates what the model sees from
what the sampler's search has gathered.

    mixbo-compare -p ackley5c -s mixbo gp --seeds 20 -n 100 -o a5c
    python benchmarks/ackley5c_plateau.py a5c/runs.jsonl --rank mixbo gp
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from functools import partial

import numpy as np

OPTIMUM_CATEGORY = 8
CATEGORICALS = [f"h{i}" for i in range(1, 6)]


def load_runs(specs: list[str]) -> dict[str, list[list[dict]]]:
    """Each sampler's Ackley-5C runs: per run, its trials in order. A spec is a ``runs.jsonl``
    path, optionally followed by ``:`` and the samplers to take from it (``runs.jsonl:gp,tpe``)."""
    runs: dict[str, list[list[dict]]] = defaultdict(list)
    for spec in specs:
        path, _, only = spec.partition(":")
        wanted = set(only.split(",")) if only else None
        with open(path) as lines:
            for line in lines:
                run = json.loads(line)
                sampler = run["run"]["sampler"]
                if wanted is not None and sampler not in wanted:
                    continue
                if run["run"]["problem"] == "ackley5c" and run["run"]["status"] == "ok":
                    runs[sampler].append(run["trials"])
    return runs


def plateau_path(trials: list[dict]) -> dict | None:
    """Where a run first has one category wrong and what it does until its categories are right:
    trials keeping the incumbent's categories, distinct single-category tries, and single-category
    trials that change the incumbent's wrong variable or one of its right ones; ``None`` if it
    never has exactly one wrong."""
    params = [json.loads(t["params"]) for t in trials]
    values = np.array([float(t["value"]) for t in trials])
    H = np.array([[p[name] for name in CATEGORICALS] for p in params])
    wrong = (H != OPTIMUM_CATEGORY).sum(axis=1)
    first = np.flatnonzero(wrong == 1)
    if not len(first):
        return None
    start = int(first[0])
    fixed = [int(t) for t in np.flatnonzero(wrong == 0) if t > start]
    end = fixed[0] if fixed else len(trials)
    float_only, tries, by_variable = 0, set(), {"wrong": 0, "right": 0}
    for t in range(start + 1, end):
        incumbent = H[int(np.argmin(values[:t]))]
        changed = H[t] != incumbent
        float_only += not changed.any()
        if changed.sum() == 1:
            tries.add(tuple(H[t]))
            by_variable["right" if incumbent[changed][0] == OPTIMUM_CATEGORY else "wrong"] += 1
    return {
        "start": start,
        "fixed": fixed[0] if fixed else None,
        "float_only": float_only,
        "tries": len(tries),
        "wrong_variable": by_variable["wrong"],
        "right_variable": by_variable["right"],
    }


def neighbour_ranks(scores: np.ndarray, fix: int, wrong_moves: np.ndarray) -> tuple[int, int]:
    """Ranks (1 = best) by ``scores`` of the neighbour ``fix`` and of the best-scored neighbour
    among ``wrong_moves`` (a mask: those changing the wrong variable); ties rank best."""
    return (
        int((scores > scores[fix]).sum()) + 1,
        int((scores > scores[wrong_moves].max()).sum()) + 1,
    )


def plateau_ranks(runs: list[list[dict]]) -> dict[str, dict[str, list[int]]]:
    """Per model, the fix's and the wrong variable's ranks by log EI among the unseen
    single-category neighbours of the incumbent (:func:`neighbour_ranks`), refitted on each run up
    to the trial that first reaches the plateau."""
    from common.acquisition.functions import evaluate, log_expected_improvement
    from common.methods.casmopolitan.options import CHOSEN_WARPINGS
    from common.models.gp import FIT_MAXITER, fit_gp
    from common.models.kernel_choice import fit_choosing
    from common.models.kernels.mixture import casmopolitan_kernels, cocabo_kernel
    from common.optim.local_search import hamming_neighbours
    from common.space.configset import ConfigSet
    from mixbo_compare.problems import get_problem

    problem = get_problem("ackley5c")
    space = problem.space
    cont, cat = list(space.cont_dims), list(space.cat_dims)
    models = {
        "MixboSampler's": lambda X, y: fit_choosing(
            X, y, casmopolitan_kernels(cont, cat), None, FIT_MAXITER, CHOSEN_WARPINGS
        )[0],
        "CoCaBO's additive": lambda X, y: fit_gp(
            X, y, partial(cocabo_kernel, cont, cat), warping="blend"
        )[0],
    }
    ranks: dict[str, dict[str, list[int]]] = {
        name: {"fix": [], "wrong variable": []} for name in models
    }
    for trials in runs:
        path = plateau_path(trials)
        if path is None:
            continue
        n = path["start"] + 1
        configs = [json.loads(t["params"]) for t in trials[:n]]
        y = np.array([float(t["value"]) for t in trials[:n]])
        X = space.encode(configs)
        best = int(np.argmin(y))
        if (X[best, cat] != OPTIMUM_CATEGORY).sum() != 1:  # the plateau is not the incumbent yet
            continue
        neighbours = hamming_neighbours(X[best][None], space, np.random.default_rng(0), 10**4)[0]
        neighbours = neighbours[~ConfigSet(space, X).contains(neighbours)]
        values = np.array([problem(c) for c in space.decode(neighbours)])
        fix = int(np.argmin(values))
        wrong = cat[int(np.flatnonzero(X[best, cat] != OPTIMUM_CATEGORY)[0])]
        wrong_moves = neighbours[:, wrong] != X[best, wrong]
        for name, fit in models.items():
            model = fit(X, y)
            acq = log_expected_improvement(model, float(model.train_targets[best]))
            scores = evaluate(acq, neighbours).reshape(-1)
            fix_rank, wrong_rank = neighbour_ranks(scores, fix, wrong_moves)
            ranks[name]["fix"].append(fix_rank)
            ranks[name]["wrong variable"].append(wrong_rank)
    return ranks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "runs", nargs="+", help="mixbo-compare runs.jsonl files, each optionally PATH:SAMPLER,..."
    )
    parser.add_argument(
        "--rank", nargs="+", metavar="SAMPLER", default=[], help="refit these samplers' runs (slow)"
    )
    args = parser.parse_args()
    runs = load_runs(args.runs)
    print(
        "| sampler | runs | reach the plateau | fix it | tries before the fix | float-only trials "
        "| single-category trials, wrong variable / right ones (median) |"
    )
    print("|---|---|---|---|---|---|---|")
    for sampler, sampler_runs in sorted(runs.items()):
        paths = [p for p in map(plateau_path, sampler_runs) if p is not None]
        fixed = [p for p in paths if p["fixed"] is not None]
        tries = sorted(p["tries"] for p in fixed)
        float_only = [p["float_only"] for p in paths]
        spread = (
            f"{min(float_only)}–{max(float_only)}, median {np.median(float_only):g}"
            if paths
            else "–"
        )
        per_variable = (
            f"{np.median([p['wrong_variable'] for p in paths]):g} / "
            f"{np.median([p['right_variable'] for p in paths]):g}"
            if paths
            else "–"
        )
        print(
            f"| {sampler} | {len(sampler_runs)} | {len(paths)} | {len(fixed)} | {tries} | "
            f"{spread} | {per_variable} |"
        )
    for sampler in args.rank:
        for name, by_kind in plateau_ranks(runs[sampler]).items():
            for kind, ranks in by_kind.items():
                print(
                    f"{sampler}'s runs, {name} model: the {kind} ranks {sorted(ranks)}, "
                    f"median {np.median(ranks):g}"
                )


if __name__ == "__main__":
    main()
