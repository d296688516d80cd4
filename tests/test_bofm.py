"""The BO-FM strategy, its MAP fit and BOFMSampler (the optimiser: test_typewise_ascent)."""

import itertools
import time

import numpy as np
import optuna
import pytest
import torch

from common.methods.bofm.fm_model import fit_fm_gp
from common.methods.bofm.options import BOFMOptions
from common.methods.bofm.strategy import BOFM
from common.models.kernels.frequency_modulated import FMLayout
from common.space.history import History
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace
from optuna_plugins import BOFMSampler

SPACE = MixedSpace(
    [
        Categorical("opt", ("adam", "sgd", None)),
        Float("lr", 1e-4, 1e-1, log=True),
        Integer("depth", 1, 6),  # path graph
        Integer("width", 8, 256, step=8),  # continuous
        Float("drop", 0.0, 0.5, step=0.1),
        Categorical("fixed", ("only",)),
    ]
)


def _objective(c):
    return (
        (np.log10(c["lr"]) + 2.5) ** 2
        + 0.1 * abs(c["depth"] - 4)
        + (c["opt"] != "sgd")
        + (c["width"] - 64) ** 2 / 1e4
        + c["drop"]
    )


def _history(n, seed=0, pending=0):
    rng = np.random.default_rng(seed)
    configs = SPACE.decode(SPACE.sample(n + pending, rng))
    return History.from_lists(configs[:n], [_objective(c) for c in configs[:n]], configs[n:])


def _valid(space, config):
    assert list(config) == list(space.names)
    for p in space.params:
        v = config[p.name]
        if isinstance(p, Categorical):
            assert any(v is c or v == c for c in p.choices)
        elif isinstance(p, Integer):
            assert isinstance(v, int) and p.low <= v <= p.high and (v - p.low) % p.step == 0
        else:
            assert isinstance(v, float) and p.low <= v <= p.high
            if p.step is not None:
                assert abs(round((v - p.low) / p.step) * p.step + p.low - v) < 1e-9


def test_suggestions_are_valid_distinct_and_reproducible():
    history = _history(15, pending=2)
    configs = BOFM(BOFMOptions()).suggest(SPACE, history, 3, np.random.default_rng(0))
    assert len(configs) == 3
    for c in configs:
        _valid(SPACE, c)
    taken = [*history.configs, *history.pending]
    keys = {tuple(sorted(map(str, c.items()))) for c in taken}
    new = [tuple(sorted(map(str, c.items()))) for c in configs]
    assert len(set(new)) == 3 and not keys & set(new)
    again = BOFM(BOFMOptions()).suggest(SPACE, history, 3, np.random.default_rng(0))
    assert again == configs


def test_suggestions_do_not_depend_on_the_clock(monkeypatch):
    """Iteration caps only: a process whose clocks leap forward (a loaded machine) suggests the
    same points from the same seed."""
    history = _history(20, pending=1)  # 20 observations: a full restart of the fit
    expected = BOFM(BOFMOptions()).suggest(SPACE, history, 2, np.random.default_rng(3))
    leaps = itertools.count()
    for name in ("process_time", "perf_counter", "monotonic"):
        real = getattr(time, name)
        monkeypatch.setattr(time, name, lambda real=real: real() + 1e4 * next(leaps))
    assert BOFM(BOFMOptions()).suggest(SPACE, history, 2, np.random.default_rng(3)) == expected


def test_global_random_states_are_untouched():
    history = _history(12)
    torch_state, np_state = torch.random.get_rng_state(), np.random.get_state()
    BOFM(BOFMOptions()).suggest(SPACE, history, 1, np.random.default_rng(1))
    assert torch.equal(torch.random.get_rng_state(), torch_state)
    assert np.random.get_state()[1].tolist() == np_state[1].tolist()


def test_exhausts_a_small_discrete_space_without_repeats():
    space = MixedSpace([Categorical("a", "xyz"), Integer("b", 0, 2)])
    everything = [{"a": a, "b": b} for a in "xyz" for b in range(3)]
    rng = np.random.default_rng(0)
    strategy = BOFM(BOFMOptions())
    configs, values = everything[:2], [1.0, 2.0]
    for _ in range(7):
        (c,) = strategy.suggest(space, History.from_lists(configs, values), 1, rng)
        assert c not in configs
        configs.append(c)
        values.append(float(ord(c["a"]) + c["b"]))
    assert sorted(map(str, configs)) == sorted(map(str, everything))


def test_finds_the_optimum_of_a_simple_mixed_function():
    space = MixedSpace(
        [Categorical("c", ("a", "b", "c")), Float("x", -1.0, 1.0), Integer("k", 0, 9)]
    )

    def f(cfg):
        return 4 * (cfg["x"] - 0.3) ** 2 + (cfg["c"] != "b") + 0.2 * abs(cfg["k"] - 6)

    rng = np.random.default_rng(0)
    configs = space.decode(space.sample(8, rng))
    values = [f(c) for c in configs]
    strategy = BOFM(BOFMOptions())
    for _ in range(14):
        (c,) = strategy.suggest(space, History.from_lists(configs, values), 1, rng)
        configs.append(c)
        values.append(f(c))
    best = configs[int(np.argmin(values))]
    assert min(values) < 0.25, (best, min(values))  # c = "b", |k − 6| ≤ 1, x near 0.3
    assert best["c"] == "b"


def test_fit_recovers_relevance_and_warm_starts():
    rng = np.random.default_rng(0)
    space = MixedSpace(
        [
            Categorical("c", tuple(range(4))),
            Categorical("noise", tuple(range(4))),
            Float("x", 0.0, 1.0),
        ]
    )
    layout = FMLayout.from_space(space)
    Z = layout.to_model(space.sample(60, rng))
    y = np.sin(6 * Z[:, 2]) + 2.0 * (Z[:, 0] == 1)  # "noise" is irrelevant
    model, params = fit_fm_gp(layout, Z, y, rng)
    beta = model.covar_module.base_kernel.beta.detach().numpy()
    assert beta[1] > 10 * beta[0]  # large β: the factor is flat, the parameter ignored
    again, _ = fit_fm_gp(layout, Z, y, rng, warm_start=params, full_restart=False)
    for name, value in again.named_parameters():
        assert torch.allclose(value, params[name], rtol=0.05, atol=0.05), name


def test_numerical_failures_degrade_with_a_warning(monkeypatch, capture_logs):
    import common.methods.bofm.fm_model as fm_model

    def broken(*args, **kwargs):
        raise RuntimeError("cholesky failed")

    monkeypatch.setattr(fm_model.MAPObjective, "minimise", broken)
    history = _history(12)
    caplog = capture_logs("mixbo")  # the core's logger outside an adapter
    (c,) = BOFM(BOFMOptions()).suggest(SPACE, history, 1, np.random.default_rng(0))
    _valid(SPACE, c)
    assert any("fit failed" in r.getMessage() for r in caplog.records)
    constant = History.from_lists(history.configs, np.ones(len(history)))
    _valid(SPACE, BOFM(BOFMOptions()).suggest(SPACE, constant, 1, np.random.default_rng(0))[0])


def test_acquisition_failure_degrades_to_random_points(monkeypatch, capture_logs):
    import common.optim.typewise_ascent as typewise

    def broken(*args, **kwargs):
        raise RuntimeError("not positive definite")

    monkeypatch.setattr(typewise, "evaluate", broken)
    history = _history(12)
    caplog = capture_logs("mixbo")  # the core's logger outside an adapter
    configs = BOFM(BOFMOptions()).suggest(SPACE, history, 2, np.random.default_rng(0))
    assert len(configs) == 2 and configs[0] != configs[1]
    for c in configs:
        _valid(SPACE, c)
    assert any("acquisition failed" in r.getMessage() for r in caplog.records)


def test_continuous_only_space_falls_back_to_matern():
    space = MixedSpace([Float("x", 0.0, 1.0), Integer("n", 0, 1000)])
    rng = np.random.default_rng(0)
    configs = space.decode(space.sample(6, rng))
    history = History.from_lists(configs, [c["x"] ** 2 + c["n"] / 1000 for c in configs])
    _valid(space, BOFM(BOFMOptions()).suggest(space, history, 2, rng)[0])


def test_sampler_with_user_graph_and_maximisation():
    adjacency = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]])
    sampler = BOFMSampler(seed=0, n_startup_trials=4, graphs={"size": adjacency})

    def objective(trial):
        size = trial.suggest_categorical("size", ["xs", "s", "m", "l"])
        x = trial.suggest_float("x", -2.0, 2.0)
        n = trial.suggest_int("n", 1, 5)
        return -(x**2) - (size != "m") - 0.1 * n

    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(objective, n_trials=10)
    assert len(study.trials) == 10 and study.best_value > -1.5
    assert study.trials[-1].params["size"] in ("xs", "s", "m", "l")


@pytest.mark.slow
def test_bofm_beats_random_search_on_func2c():
    from mixbo_compare import run
    from mixbo_compare.problems import get_problem

    problem = get_problem("func2c")
    ours = [run(problem, "bofm", seed, 60).values.min() for seed in range(3)]
    rand = [run(problem, "random", seed, 60).values.min() for seed in range(3)]
    assert np.median(ours) < np.median(rand)
