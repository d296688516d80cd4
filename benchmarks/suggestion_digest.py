"""One SHA-256 per sampler and searcher of the exact parameters it suggests: the proof that a
refactoring left every suggestion unchanged.

Every Optuna sampler and Ray searcher runs with a fixed seed on a mixed space (floats, log floats,
ints, categoricals of 2 to 5 values) and on a space of 25 categoricals, against deterministic
objectives; every eighth trial is asked while another is running (PLAyBOOK's busy-point path),
and ``MixboSampler`` and ``CoCaBOSearch`` also run one conditional, constrained study. Every
sampler and ``MixboSearch`` also run a two-objective study (one minimised, one maximised, with a
constraint) on the mixed space, with the same pending asks; and every sampler runs a study asked
in batches of :data:`BATCH` (each batch's later asks made while the earlier ones run: PLAyBOOK's
penalisation of several busy points). Each line
is the digest of the ``repr`` of every suggested parameter, in order. Run it before and after a
change and compare the outputs (``diff``); it takes about five minutes on one core.

    OMP_NUM_THREADS=1 python benchmarks/suggestion_digest.py > before.txt
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Callable
from typing import Any

import optuna
from ray import tune

import optuna_plugins
import ray_plugins

N_TRIALS = {"mixed": 32, "cat25": 26}
N_STARTUP = 6
PENDING_EVERY = 8  # every eighth trial is asked while the one before it still runs
BATCH = 4  # run_batch_sampler: asks made before any of them is told
CHOICES = ["a", "b", "c", "d", "e"]


def mixed_value(p: dict[str, Any]) -> float:
    """A deterministic objective over the mixed space."""
    return (
        (p["x0"] - 0.3) ** 2
        + (p["x1"] + 1.2) ** 2
        + (math.log10(p["lr"]) + 3) ** 2
        + (p["n"] - 7) ** 2 / 10
        + math.log2(p["m"])
        + (p["q"] - 0.5) ** 2
        + (p["flag"] != "on")
        + CHOICES[:3].index(p["c3"]) * 0.7
        + (p["c5"] != "d") * 1.3
    )


def cat25_value(p: dict[str, Any]) -> float:
    """A deterministic objective over 25 categoricals."""
    return float(sum((CHOICES.index(p[f"c{i}"]) - i % 5) ** 2 for i in range(25)))


def suggest_mixed(trial: optuna.Trial) -> dict[str, Any]:
    return {
        "x0": trial.suggest_float("x0", -2.0, 2.0),
        "x1": trial.suggest_float("x1", -3.0, 1.0),
        "lr": trial.suggest_float("lr", 1e-5, 1e-1, log=True),
        "q": trial.suggest_float("q", 0.0, 1.0, step=0.125),
        "n": trial.suggest_int("n", 0, 20),
        "m": trial.suggest_int("m", 1, 64, log=True),
        "flag": trial.suggest_categorical("flag", ["on", "off"]),
        "c3": trial.suggest_categorical("c3", CHOICES[:3]),
        "c5": trial.suggest_categorical("c5", CHOICES),
    }


def suggest_cat25(trial: optuna.Trial) -> dict[str, Any]:
    return {f"c{i}": trial.suggest_categorical(f"c{i}", CHOICES) for i in range(25)}


def suggest_conditional(trial: optuna.Trial) -> dict[str, Any]:
    kind = trial.suggest_categorical("kind", ["svm", "tree"])
    p: dict[str, Any] = {"kind": kind, "x": trial.suggest_float("x", -2.0, 2.0)}
    if kind == "svm":
        p["C"] = trial.suggest_float("C", 1e-3, 1e3, log=True)
    else:
        p["depth"] = trial.suggest_int("depth", 1, 12)
    return p


def conditional_value(p: dict[str, Any]) -> float:
    if p["kind"] == "svm":
        return (p["x"] - 0.5) ** 2 + (math.log10(p["C"]) - 1) ** 2
    return (p["x"] + 0.5) ** 2 + (p["depth"] - 4) ** 2 / 8 + 0.2


def conditional_constraint(p: dict[str, Any]) -> float:
    return p["x"] - 1.0  # feasible when x <= 1


SPACES: dict[str, tuple[Callable[[optuna.Trial], dict], Callable[[dict], float]]] = {
    "mixed": (suggest_mixed, mixed_value),
    "cat25": (suggest_cat25, cat25_value),
}


def digest(suggestions: list[dict[str, Any]]) -> str:
    text = "\n".join(repr(sorted(p.items())) for p in suggestions)
    return hashlib.sha256(text.encode()).hexdigest()


def run_sampler(sampler: optuna.samplers.BaseSampler, space: str) -> list[dict[str, Any]]:
    """A sequential study, every ``PENDING_EVERY``-th trial asked while its predecessor runs."""
    suggest, value = SPACES[space]
    study = optuna.create_study(sampler=sampler)
    seen: list[dict[str, Any]] = []
    i = 0
    while i < N_TRIALS[space]:
        if i % PENDING_EVERY == PENDING_EVERY - 1:
            first, second = study.ask(), study.ask()
            p1 = suggest(first)
            p2 = suggest(second)
            seen += [p1, p2]
            study.tell(first, value(p1))
            study.tell(second, value(p2))
            i += 2
        else:
            trial = study.ask()
            p = suggest(trial)
            seen.append(p)
            study.tell(trial, value(p))
            i += 1
    return seen


def run_conditional_sampler(sampler: optuna.samplers.BaseSampler) -> list[dict[str, Any]]:
    study = optuna.create_study(sampler=sampler)
    seen = []
    for _ in range(20):
        trial = study.ask()
        p = suggest_conditional(trial)
        trial.set_constraint("x_at_most_1", conditional_constraint(p))
        seen.append(p)
        study.tell(trial, conditional_value(p))
    return seen


def run_batch_sampler(sampler: optuna.samplers.BaseSampler) -> list[dict[str, Any]]:
    """A study on the mixed space asked :data:`BATCH` trials at a time, each batch told after
    its last ask."""
    study = optuna.create_study(sampler=sampler)
    seen: list[dict[str, Any]] = []
    while len(seen) < N_TRIALS["mixed"]:
        trials = [study.ask() for _ in range(BATCH)]
        params = [suggest_mixed(trial) for trial in trials]
        seen += params
        for trial, p in zip(trials, params, strict=True):
            study.tell(trial, mixed_value(p))
    return seen


def mixed_objectives(p: dict[str, Any]) -> tuple[float, float]:
    """Two conflicting objectives over the mixed space: the first minimised, the second
    maximised."""
    return mixed_value(p), -((p["x0"] + 1.0) ** 2) - (p["n"] - 15) ** 2 / 10 - (p["c3"] != "c")


def mixed_constraint(p: dict[str, Any]) -> float:
    return p["x1"] - 0.5  # feasible when x1 <= 0.5


def run_multi_objective_sampler(sampler: optuna.samplers.BaseSampler) -> list[dict[str, Any]]:
    """:func:`run_sampler`'s pending asks on a constrained two-objective study."""
    study = optuna.create_study(sampler=sampler, directions=["minimize", "maximize"])
    seen: list[dict[str, Any]] = []
    while len(seen) < N_TRIALS["mixed"]:
        pair = len(seen) % PENDING_EVERY == PENDING_EVERY - 1
        trials = [study.ask() for _ in range(2 if pair else 1)]
        params = [suggest_mixed(trial) for trial in trials]
        for trial, p in zip(trials, params, strict=True):
            trial.set_constraint("x1_at_most_half", mixed_constraint(p))
            seen.append(p)
            study.tell(trial, mixed_objectives(p))
    return seen


def tune_space(space: str) -> dict[str, Any]:
    if space == "cat25":
        return {f"c{i}": tune.choice(CHOICES) for i in range(25)}
    return {
        "x0": tune.uniform(-2.0, 2.0),
        "x1": tune.uniform(-3.0, 1.0),
        "lr": tune.loguniform(1e-5, 1e-1),
        "q": tune.quniform(0.0, 1.0, 0.125),
        "n": tune.randint(0, 21),
        "m": tune.lograndint(1, 65),
        "flag": tune.choice(["on", "off"]),
        "c3": tune.choice(CHOICES[:3]),
        "c5": tune.choice(CHOICES),
    }


def run_searcher(cls: type, space: str) -> list[dict[str, Any]]:
    """The searcher driven through ``suggest``/``on_trial_complete``, as Tune would."""
    value = SPACES[space][1]
    searcher = cls(tune_space(space), metric="loss", mode="min", seed=0, n_startup_trials=N_STARTUP)
    seen: list[dict[str, Any]] = []
    i = 0
    while i < N_TRIALS[space]:
        ids = [str(i), str(i + 1)] if i % PENDING_EVERY == PENDING_EVERY - 1 else [str(i)]
        configs = [searcher.suggest(trial_id) for trial_id in ids]
        for trial_id, config in zip(ids, configs, strict=True):
            seen.append(config)
            searcher.on_trial_complete(trial_id, {"loss": value(config)})
        i += len(ids)
    return seen


def run_conditional_searcher(cls: type) -> list[dict[str, Any]]:
    space = {
        "x": tune.uniform(-2.0, 2.0),
        "model": tune.choice(
            [{"kind": "svm", "C": tune.loguniform(1e-3, 1e3)}, {"kind": "tree", "depth": 4}]
        ),
    }
    searcher = cls(
        space, metric="loss", mode="min", seed=0, n_startup_trials=N_STARTUP, constraints=["g"]
    )
    seen = []
    for i in range(20):
        config = searcher.suggest(str(i))
        seen.append({"x": config["x"], **config["model"]})
        p = {"x": config["x"], **config["model"]}
        searcher.on_trial_complete(
            str(i), {"loss": conditional_value(p), "g": conditional_constraint(p)}
        )
    return seen


def run_multi_objective_searcher(cls: type) -> list[dict[str, Any]]:
    """:func:`run_multi_objective_sampler`'s study through a Ray searcher."""
    searcher = cls(
        tune_space("mixed"),
        metric=["loss", "score"],
        mode=["min", "max"],
        seed=0,
        n_startup_trials=N_STARTUP,
        constraints=["g"],
    )
    seen: list[dict[str, Any]] = []
    while len(seen) < N_TRIALS["mixed"]:
        i = len(seen)
        ids = [str(i), str(i + 1)] if i % PENDING_EVERY == PENDING_EVERY - 1 else [str(i)]
        configs = [searcher.suggest(trial_id) for trial_id in ids]
        for trial_id, config in zip(ids, configs, strict=True):
            seen.append(config)
            loss, score = mixed_objectives(config)
            result = {"loss": loss, "score": score, "g": mixed_constraint(config)}
            searcher.on_trial_complete(trial_id, result)
    return seen


def main() -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore")
    for name in ("CoCaBOSampler", "CasmopolitanSampler", "BOFMSampler", "MixboSampler"):
        cls = getattr(optuna_plugins, name)
        for space in SPACES:
            suggestions = run_sampler(cls(seed=0, n_startup_trials=N_STARTUP), space)
            print(f"{name:22s} {space:12s} {digest(suggestions)}", flush=True)
    sampler = optuna_plugins.MixboSampler(seed=0, n_startup_trials=N_STARTUP)
    print(f"{'MixboSampler':22s} {'conditional':12s} {digest(run_conditional_sampler(sampler))}")
    for name in ("CoCaBOSampler", "CasmopolitanSampler", "BOFMSampler", "MixboSampler"):
        sampler = getattr(optuna_plugins, name)(seed=0, n_startup_trials=N_STARTUP)
        seen = run_multi_objective_sampler(sampler)
        print(f"{name:22s} {'2-objective':12s} {digest(seen)}", flush=True)
    for name in ("CoCaBOSearch", "CasmopolitanSearch", "BOFMSearch", "MixboSearch"):
        cls = getattr(ray_plugins, name)
        for space in SPACES:
            print(f"{name:22s} {space:12s} {digest(run_searcher(cls, space))}", flush=True)
    cls = ray_plugins.CoCaBOSearch
    print(f"{'CoCaBOSearch':22s} {'conditional':12s} {digest(run_conditional_searcher(cls))}")
    seen = run_multi_objective_searcher(ray_plugins.MixboSearch)
    print(f"{'MixboSearch':22s} {'2-objective':12s} {digest(seen)}")
    for name in ("CoCaBOSampler", "CasmopolitanSampler", "BOFMSampler", "MixboSampler"):
        sampler = getattr(optuna_plugins, name)(seed=0, n_startup_trials=N_STARTUP)
        seen = run_batch_sampler(sampler)
        print(f"{name:22s} {f'batch of {BATCH}':12s} {digest(seen)}", flush=True)


if __name__ == "__main__":
    main()
