"""Constraints: feasibility-weighted acquisition, best feasible incumbents, Optuna's two ways."""

import math
from types import SimpleNamespace

import numpy as np
import optuna
import pytest
import torch
from botorch.acquisition import AcquisitionFunction

from common.acquisition.feasibility import (
    FeasibilityWeighted,
    ZeroAcquisition,
    effective_values,
    feasibility,
)
from common.space.history import History
from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler

SAMPLERS = [CoCaBOSampler, CasmopolitanSampler, BOFMSampler, MixboSampler]


def test_feasible_trials_rank_first_and_infeasible_ones_by_violation() -> None:
    history = History.from_lists(
        [{}] * 4, [0.0, 5.0, 1.0, 2.0], constraints=[[1.0], [-1.0], [3.0], [math.nan]]
    )
    assert history.constrained
    np.testing.assert_array_equal(history.feasible, [False, True, False, False])
    eff = effective_values(history)
    assert eff[1] == 5.0  # the only feasible trial is the best
    assert eff[1] < eff[3] < eff[0] < eff[2]  # unknown (no violation), then by violation


def test_an_unconstrained_history_keeps_its_values() -> None:
    history = History.from_lists([{}] * 2, [3.0, 1.0])
    assert not history.constrained and history.feasible.all()
    np.testing.assert_array_equal(effective_values(history), [3.0, 1.0])


def _objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -3, 3)
    y = trial.suggest_float("y", -3, 3)
    kind = trial.suggest_categorical("kind", ["a", "b"])
    trial.set_constraint("sum", x + y - 1.0)  # feasible: x + y <= 1
    return (x - 2) ** 2 + (y - 2) ** 2 + (0.5 if kind == "b" else 0.0)


@pytest.mark.parametrize("sampler_cls", SAMPLERS)
def test_constraints_steer_the_search_to_the_feasible_side(sampler_cls) -> None:
    # the unconstrained optimum (2, 2) is infeasible; the constrained one is (0.5, 0.5)
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=8))
    study.optimize(_objective, n_trials=26)
    after_design = study.trials[8:]
    feasible = [t for t in after_design if t.constraints["sum"] <= 0]
    assert len(feasible) >= len(after_design) // 2
    best = min(t.value for t in study.trials if t.constraints["sum"] <= 0)
    assert best < 6.0  # constrained optimum 4.5; the design alone rarely gets below 6


@pytest.mark.parametrize("sampler_cls", [CoCaBOSampler, CasmopolitanSampler, BOFMSampler])
def test_constraint_values_change_the_suggestion(sampler_cls) -> None:
    def run(with_constraints: bool) -> dict:
        study = optuna.create_study(sampler=sampler_cls(seed=3, n_startup_trials=6))
        rng = np.random.default_rng(0)
        dists = {
            "x": optuna.distributions.FloatDistribution(-3, 3),
            "y": optuna.distributions.FloatDistribution(-3, 3),
            "kind": optuna.distributions.CategoricalDistribution(["a", "b"]),
        }
        for _ in range(10):
            params = {"x": rng.uniform(-3, 3), "y": rng.uniform(-3, 3), "kind": "a"}
            value = (params["x"] - 2) ** 2 + (params["y"] - 2) ** 2
            attrs = {"constraints": (params["x"] + params["y"] - 1.0,)} if with_constraints else {}
            study.add_trial(
                optuna.trial.create_trial(
                    params=params, distributions=dists, value=value, system_attrs=attrs
                )
            )
        trial = study.ask(dists)
        return trial.params

    free, constrained = run(False), run(True)
    assert free != constrained  # same seed, same trials: only the constraint values differ
    assert run(True) == constrained


@pytest.mark.parametrize("sampler_cls", SAMPLERS)
def test_infeasible_only_and_unreported_histories_still_give_suggestions(
    sampler_cls, caplog
) -> None:
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=4))

    def never_feasible(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        kind = trial.suggest_categorical("kind", ["a", "b"])
        if trial.number % 3:  # some trials report no constraint at all
            trial.set_constraint("c", 1.0 + x)
        return x + (kind == "b")

    with caplog.at_level("WARNING"):
        study.optimize(never_feasible, n_trials=10)
    assert len(study.trials) == 10
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    assert "failed to suggest" not in caplog.text
    # seeking feasibility: with x the only lever, the model pushes x down
    assert np.median([t.params["x"] for t in study.trials[4:]]) < 0.5


def test_constraints_func_is_stored_and_used_as_optunas_samplers_do() -> None:
    sampler = CasmopolitanSampler(
        seed=0, n_startup_trials=4, constraints_func=lambda t: (t.params["x"] - 0.2,)
    )
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: -t.suggest_float("x", 0, 1), n_trials=12)
    assert all(list(t.constraints.values()) == [t.params["x"] - 0.2] for t in study.trials)
    feasible = [t.params["x"] for t in study.trials if t.params["x"] <= 0.2]
    assert max(feasible) > 0.15  # the optimum is on the boundary, x = 0.2
    with pytest.raises(ValueError, match="callable"):
        CasmopolitanSampler(constraints_func=3)


class _Known(torch.nn.Module):
    """A constraint model with a known posterior: mean ``0.5 − x`` (feasible where x ≤ 0.5,
    threshold 0), standard deviation 0.05."""

    def posterior(self, X: torch.Tensor) -> SimpleNamespace:
        mean = 0.5 - X[..., :1]
        return SimpleNamespace(mean=mean, variance=torch.full_like(mean, 0.05**2))


class _Improvement(AcquisitionFunction):
    """A log-EI stand-in that grows steeply into the infeasible side."""

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return 100.0 * X[..., 0, 0]


def test_candidates_are_held_to_an_even_chance_of_feasibility() -> None:
    grid = torch.linspace(0, 1, 2001, dtype=torch.float64).reshape(-1, 1, 1)
    base = _Improvement(model=None)
    weighted = FeasibilityWeighted(base, [(_Known(), 0.0)])
    chosen = float(grid[weighted(grid).argmax()])
    p_chosen = float(torch.special.ndtr(torch.tensor((0.5 - chosen) / 0.05)))
    assert p_chosen >= 0.45  # at the boundary (P = 0.5 at x = 0.5), not beyond it
    # the product alone (log EI + log P) would go where feasibility is a long shot
    plain = base(grid) + torch.special.log_ndtr((0.5 - grid[..., 0, 0]) / 0.05)
    x_plain = float(grid[plain.argmax()])
    assert float(torch.special.ndtr(torch.tensor((0.5 - x_plain) / 0.05))) < 1e-3


def test_where_none_is_likely_feasible_the_most_probably_feasible_wins() -> None:
    grid = torch.linspace(0.8, 1, 201, dtype=torch.float64).reshape(-1, 1, 1)
    weighted = FeasibilityWeighted(ZeroAcquisition(model=None), [(_Known(), 0.0)])
    assert float(grid[weighted(grid).argmax()]) == pytest.approx(0.8)


def test_a_linear_constraint_no_trial_violated_yet_still_guards_where_none_has_been() -> None:
    from common.models.gp import fit_gp
    from common.models.kernels.matern import matern_kernel

    x = np.linspace(0.0, 0.65, 12)
    c = x - 0.7  # feasible for every trial so far; violated beyond x = 0.7
    history = History.from_lists([{"x": v} for v in x], (x - 1) ** 2, constraints=c[:, None])
    X = x[:, None]

    def fit(k, rows, values):
        return fit_gp(X[rows], values, lambda: matern_kernel([0]), constraint=True)[0]

    f = feasibility(history, -((x - 1) ** 2), fit)
    assert len(f.models) == 1  # modelled although never violated
    model, t = f.models[0]
    with torch.no_grad():
        post = model.posterior(torch.tensor([[0.3], [0.8]], dtype=torch.float64))
        p = torch.special.ndtr((post.mean.squeeze(-1) - t) / post.variance.sqrt().squeeze(-1))
    assert p[0] > 0.9 and p[1] < 0.5  # the trend carries a little past the trials


@pytest.mark.parametrize("violated", [True, False])
def test_a_constraint_reported_as_its_violation_amount_holds_its_zeros_feasible(violated) -> None:
    """``max(0, g)``: every feasible trial reports exactly 0, where the model, sure of 0, would
    give a coin toss; the zeros' neighbourhood is called feasible, and the violations are still
    guarded (with none seen yet, nothing is excluded)."""
    from common.models.gp import fit_gp
    from common.models.kernels.matern import matern_kernel

    x = np.linspace(0.0, 1.0 if violated else 0.55, 15)
    c = np.maximum(0.0, x - 0.6)
    history = History.from_lists([{"x": v} for v in x], (x - 0.3) ** 2, constraints=c[:, None])
    X = x[:, None]

    def fit(k, rows, values):
        return fit_gp(X[rows], values, lambda: matern_kernel([0]), constraint=True)[0]

    ((model, t),) = feasibility(history, -((x - 0.3) ** 2), fit).models
    grid = torch.linspace(0, 1, 101, dtype=torch.float64).reshape(-1, 1, 1)
    with torch.no_grad():
        post = model.posterior(grid)
        p = torch.special.ndtr((post.mean.reshape(-1) - t) / post.variance.sqrt().reshape(-1))
    inside = (grid.reshape(-1) >= 0.1) & (grid.reshape(-1) <= 0.5)
    assert p[inside].min() > 0.9
    if violated:
        assert p[grid.reshape(-1) >= 0.75].max() < 0.1


def test_a_boundary_between_two_integers_is_not_crossed_by_rounding() -> None:
    # feasible from n = 51: the constraint's zero (n = 50.3) lies between two grid points, where
    # the acquisition's continuous relaxation of n is eligible and the rounded n = 50 is not
    def objective(trial: optuna.Trial) -> float:
        n = trial.suggest_int("n", 1, 99)
        x = trial.suggest_float("x", 0, 1)
        trial.set_constraint("n", 50.3 - n)
        return n + (x - 0.3) ** 2

    study = optuna.create_study(sampler=BOFMSampler(seed=0, n_startup_trials=8))
    study.optimize(objective, n_trials=24)
    after_design = [t.params["n"] for t in study.trials[8:]]
    assert min(after_design) == 51  # the best feasible integer, found and never undercut
