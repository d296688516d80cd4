"""The peers of ``mixbo-compare``: each adapter's encoding, a study driven by it, its seeding.

A peer's tests skip, naming the package, where it is not installed (``pip install 'mixbo[peers]'``);
the registry and skip tests run everywhere.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import TrialState

import mixbo_compare as compare
from mixbo_compare import peers
from mixbo_compare.peers._sampler import fixed_params, grid
from mixbo_compare.problems import get_problem

SPACE: dict[str, BaseDistribution] = {
    "x": FloatDistribution(-2.0, 3.0),
    "lr": FloatDistribution(1e-4, 1e-1, log=True),
    "dropout": FloatDistribution(0.0, 0.5, step=0.1),
    "layers": IntDistribution(1, 6),
    "units": IntDistribution(1, 1024, log=True),
    "batch": IntDistribution(16, 240, step=16),
    "bit": IntDistribution(0, 1),
    "act": CategoricalDistribution(("relu", None, 3.5)),
    "const": CategoricalDistribution(("only",)),
}
TRIALS = {"catcmawm": 14, "smac": 12, "ax": 7}  # Ax: centre, Sobol, then its GP


def _objective(p: dict[str, Any]) -> float:
    value = (p["x"] - 1.0) ** 2 + (math.log10(p["lr"]) + 2.0) ** 2 + abs(p["layers"] - 3)
    value += 0.1 * math.log2(p["units"]) + p["dropout"] + p["batch"] / 240 + p["bit"]
    return value + {"relu": 0.0, None: 1.0, 3.5: 2.0}[p["act"]]


def _study(name: str, seed: int, n_trials: int, fail: int | None = None) -> optuna.Study:
    sampler = peers.PEERS[name].build(seed, SPACE, n_trials)

    def no_fallback(*args: Any) -> Any:
        raise AssertionError("a parameter of the fixed space was sampled outside the peer")

    sampler.sample_independent = no_fallback  # every value must come from the peer
    study = optuna.create_study(sampler=sampler)
    for i in range(n_trials):
        trial = study.ask(SPACE)
        if i == fail:
            study.tell(trial, state=TrialState.FAIL)
        else:
            study.tell(trial, _objective(trial.params))
    return study


def _installed(name: str) -> None:
    pytest.importorskip(peers.PEERS[name].package, reason=f"{name}: {peers.missing(name)}")


# ------------------------------------------------------------------------- everywhere
def test_registry_names_and_extra() -> None:
    assert set(peers.PEERS) == {"catcmawm", "smac", "ax"}
    assert set(peers.PEERS) <= set(compare.names())
    assert not any(compare.is_ours(name) for name in peers.PEERS)
    # a peer that cannot run beside our dependencies is skipped with the reason, never stood in for
    assert "numpy<1.25" in compare.skip_reason("hebo", get_problem("func2c").space)
    with pytest.raises(ValueError, match="hebo"):
        compare.run(get_problem("func2c"), "hebo", 0, 2)


def test_missing_package_skips_the_peer(monkeypatch: pytest.MonkeyPatch) -> None:
    ghost = peers.Peer("no.such.module", "Nothing", "no_such_package_xyz", "no-such-package")
    monkeypatch.setitem(peers.PEERS, "ghost", ghost)
    monkeypatch.setitem(compare.APPLIES, "ghost", compare.runner._peer_installed("ghost"))
    reason = compare.skip_reason("ghost", get_problem("func2c").space)
    assert reason == "no-such-package not installed (pip install 'mixbo[peers]')"


def test_grid_and_fixed_params() -> None:
    assert grid(SPACE["batch"]).tolist() == list(range(16, 241, 16))
    assert np.allclose(grid(SPACE["dropout"]), [0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    assert grid(SPACE["x"]) is None
    assert fixed_params(SPACE) == {"const": "only"}


# ------------------------------------------------------------------------- each peer
@pytest.mark.parametrize("name", list(peers.PEERS))
def test_peer_respects_the_space(name: str) -> None:
    _installed(name)
    study = _study(name, seed=0, n_trials=TRIALS[name], fail=2)
    trials = study.get_trials()
    assert len(trials) == TRIALS[name] and trials[2].state == TrialState.FAIL
    for trial in trials:
        assert set(trial.params) == set(SPACE)
        for key, dist in SPACE.items():
            value = trial.params[key]
            assert dist._contains(dist.to_internal_repr(value)), (key, value)
            if isinstance(dist, IntDistribution):
                assert type(value) is int and (value - dist.low) % dist.step == 0
            elif isinstance(dist, FloatDistribution):
                assert type(value) is float and dist.low <= value <= dist.high
                if dist.step is not None:
                    k = (value - dist.low) / dist.step
                    assert abs(k - round(k)) < 1e-9, (key, value)
            else:
                assert any(value is c or value == c for c in dist.choices)
    # log scales: log-uniform draws fall below the geometric midpoint about half the time
    # (uniform draws on 1..1024 would do so 3 % of the time)
    first = [t.params["units"] for t in trials[:7]]
    assert sum(u <= 32 for u in first) >= 2, first


@pytest.mark.parametrize("name", list(peers.PEERS))
def test_seeded_peer_run_is_reproducible(name: str) -> None:
    _installed(name)
    n = TRIALS[name]
    a = [t.params for t in _study(name, seed=7, n_trials=n).trials]
    b = [t.params for t in _study(name, seed=7, n_trials=n).trials]
    assert a == b
    c = [t.params for t in _study(name, seed=8, n_trials=n).trials]
    assert a[1:] != c[1:]  # (Ax starts at the centre of the space whatever the seed)


def test_ax_leaves_the_global_generators_alone() -> None:
    _installed("ax")
    import torch

    torch.manual_seed(0)
    np.random.seed(0)
    expected = (torch.rand(1).item(), np.random.rand())
    torch.manual_seed(0)
    np.random.seed(0)
    _study("ax", seed=1, n_trials=TRIALS["ax"])
    assert (torch.rand(1).item(), np.random.rand()) == expected


# ------------------------------------------------------------------------- encodings
def test_catcmawm_encoding() -> None:
    _installed("catcmawm")
    from mixbo_compare.peers.catcmawm import _Codec

    codec = _Codec(SPACE)
    x = dict(zip([n for n, _ in codec.x], codec.x_space, strict=True))
    assert x["lr"] == pytest.approx([math.log(1e-4), math.log(1e-1)])  # searched in log-space
    assert x["x"] == [-2.0, 3.0]
    z = dict(zip([n for n, _ in codec.z], codec.z_space, strict=True))
    assert z["units"] == pytest.approx(np.log(np.arange(1, 1025)).tolist())
    assert z["batch"] == list(map(float, range(16, 241, 16)))
    assert z["dropout"] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    # categoricals and two-valued integers are categories; the single-valued one is left out
    assert dict(codec.c) == {"bit": [0, 1], "act": ["relu", None, 3.5]}
    assert codec.c_space == [2, 3]


def test_catcmawm_tells_whole_generations() -> None:
    _installed("catcmawm")
    study = _study("catcmawm", seed=0, n_trials=14)
    driver = study.sampler.driver
    size = driver.optimizer.population_size
    assert driver.generation == 14 // size and len(driver.told) == 14 % size


def test_smac_encoding() -> None:
    _installed("smac")
    from mixbo_compare.peers.smac3 import configspace, decode

    cs = configspace(SPACE, seed=0)
    assert set(cs) == set(SPACE) - {"const"}
    assert cs["lr"].log and cs["units"].log and not cs["x"].log
    assert (cs["batch"].lower, cs["batch"].upper) == (0, 14)  # the index of the 16-step grid
    assert (cs["dropout"].lower, cs["dropout"].upper) == (0, 5)
    config = {"batch": 2, "dropout": 3, "act": 1, "lr": 0.01, "x": 0.5, "layers": 2}
    config |= {"units": 8, "bit": 1}
    params = decode(SPACE, config)
    assert params["batch"] == 48 and params["dropout"] == pytest.approx(0.3)
    assert params["act"] is None and params["const"] == "only"


def test_ax_encoding() -> None:
    _installed("ax")
    from mixbo_compare.peers.axplatform import parameter_configs

    configs = {c.name: c for c in parameter_configs(SPACE)}
    assert set(configs) == set(SPACE) - {"const"}
    assert configs["lr"].scaling == "log" and configs["units"].scaling == "log"
    assert configs["x"].scaling == "linear"
    assert configs["batch"].bounds == (16, 240) and configs["batch"].step_size == 16
    assert configs["dropout"].step_size == 0.1 and configs["layers"].step_size is None
    assert configs["act"].values == [0, 1, 2] and configs["act"].is_ordered is False


# ------------------------------------------------------------------------- the runner
def test_runner_runs_a_peer_on_a_problem() -> None:
    _installed("catcmawm")
    result = compare.run(get_problem("func2c"), "catcmawm", 0, 12)
    assert np.isfinite(result.values).all() and len(result.suggest_seconds) == 12
    again = compare.run(get_problem("func2c"), "catcmawm", 0, 12)
    assert result.params == again.params


def test_the_stamp_names_the_version_of_each_peer_that_ran(tmp_path: Path) -> None:
    """A comparison's provenance lists the packages of the peers it ran beside the libraries."""
    _installed("catcmawm")
    import importlib.metadata

    from mixbo_compare import cli

    flags = ["-p", "func2c", "-s", "catcmawm", "random", "--seeds", "1", "-n", "3"]
    assert cli.main([*flags, "-j", "1", "--no-progress", "--quiet", "-o", str(tmp_path)]) == 0
    version = importlib.metadata.version("cmaes")
    assert json.loads((tmp_path / "provenance.json").read_text())["versions"]["cmaes"] == version
    assert f"cmaes {version}" in (tmp_path / "results.md").read_text()
    assert "smac" not in json.loads((tmp_path / "provenance.json").read_text())["versions"]


def test_cli_names_the_peers() -> None:
    from mixbo_compare import cli

    assert cli._expand_samplers(["catcmawm,smac", "tpe"]) == ["catcmawm", "smac", "tpe"]
    assert cli._expand_samplers(["peers"]) == ["catcmawm", "smac", "ax", "hebo"]
    assert cli._label("hebo") == (
        "hebo (peer, cannot run: no release runs beside numpy 2 and pandas 2+)"
    )


def test_the_peers_extra_installs_every_runnable_peer() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    extra = {req.split(">")[0] for req in project["optional-dependencies"]["peers"]}
    assert extra == {peer.distribution for peer in peers.PEERS.values()}


def test_catcmawm_ranks_infeasible_members_behind_feasible_ones() -> None:
    """Deb's feasibility rule as values: CatCMA is told an infeasible member's value behind every
    feasible one's, the infeasible ones ordered by violation; a feasible member's value is its
    objective's, and with no constraint set every value is."""
    _installed("catcmawm")
    space = {"x": FloatDistribution(-1.0, 1.0), "y": FloatDistribution(-1.0, 1.0)}
    for constrained in (True, False):
        sampler = peers.PEERS["catcmawm"].build(0, space, 40)
        driver = sampler.driver
        params: dict[int, dict[str, float]] = {}  # id of a member's solution -> its parameters
        told: list[list[tuple[float, float, float]]] = []  # (objective, violation, value told)
        ask, tell = driver.ask, driver.optimizer.tell

        def asked(ask: Any = ask, params: dict = params) -> tuple[Any, dict[str, Any]]:
            token, p = ask()
            if token is not None:
                params[id(token[1])] = p
            return token, p

        def telling(
            solutions: list, tell: Any = tell, told: list = told, params: dict = params
        ) -> None:
            generation = []
            for solution, value in solutions:
                x, y = params[id(solution)]["x"], params[id(solution)]["y"]
                generation.append((x + y, max(-x, 0.0) + max(-y, 0.0), value))
            told.append(generation)
            tell(solutions)

        driver.ask, driver.optimizer.tell = asked, telling
        study = optuna.create_study(sampler=sampler)
        for _ in range(40):
            trial = study.ask(space)
            x, y = trial.params["x"], trial.params["y"]
            if constrained:  # feasible where x >= 0 and y >= 0; the objective pulls below
                trial.set_constraint("c0", -x)
                trial.set_constraint("c1", -y)
            study.tell(trial, x + y)
        assert len(told) >= 3
        for generation in told:
            if not constrained:
                assert [v for _, _, v in generation] == pytest.approx([f for f, _, _ in generation])
                continue
            feasible = [(f, v) for f, c, v in generation if c == 0]
            infeasible = sorted((c, v) for _, c, v in generation if c > 0)
            assert all(v == pytest.approx(f) for f, v in feasible)
            if feasible and infeasible:
                assert min(v for _, v in infeasible) > max(v for _, v in feasible)
            assert [v for _, v in infeasible] == sorted(v for _, v in infeasible)
        if constrained:  # the check above had infeasible members to rank
            assert any(c > 0 for generation in told for _, c, _ in generation)


SQUARE = {"x": FloatDistribution(-1.0, 1.0), "y": FloatDistribution(-1.0, 1.0)}


def _constrained_study(
    sampler: optuna.samplers.BaseSampler, n_trials: int, constrained: bool = True
) -> optuna.Study:
    """``x + y`` on [-1, 1]² with ``x ≥ 0.2`` and ``y ≥ 0`` as constraints: the objective pulls
    away from the feasible quarter, whose best point is (0.2, 0)."""
    study = optuna.create_study(sampler=sampler)
    for _ in range(n_trials):
        trial = study.ask(SQUARE)
        x, y = trial.params["x"], trial.params["y"]
        if constrained:
            trial.set_constraint("c0", 0.2 - x)
            trial.set_constraint("c1", -y)
        study.tell(trial, x + y)
    return study


def test_smac_costs_infeasible_trials_above_every_feasible_one() -> None:
    """Deb's rule as SMAC3 costs: a feasible trial's cost is its objective's; an infeasible one's
    is above every objective value seen so far, by its violation; without constraints every
    cost is the objective's."""
    _installed("smac")
    for constrained in (True, False):
        sampler = peers.PEERS["smac"].build(0, SQUARE, 30)
        smac = sampler.driver.smac
        costs: list[float] = []

        def recording(info: Any, value: Any, tell: Any = smac.tell, costs: list = costs) -> None:
            costs.append(value.cost)
            tell(info, value)

        smac.tell = recording
        trials = _constrained_study(sampler, 30, constrained).trials
        values = [t.value for t in trials]
        excess = [sum(max(c, 0.0) for c in t.constraints.values()) for t in trials]
        for i, (cost, value, over) in enumerate(zip(costs, values, excess, strict=True)):
            expected = value if over == 0 else max(values[: i + 1]) + over
            assert cost == pytest.approx(expected)
        assert len(costs) == 30 and any(over > 0 for over in excess) == constrained


def test_ax_models_constraints_as_outcome_constraints() -> None:
    """Ax is told the constraints as outcome constraints: its model-based proposals stay in the
    feasible quarter, where without them the same seed goes to the objective's infeasible
    corner."""
    _installed("ax")
    study = _constrained_study(peers.PEERS["ax"].build(0, SQUARE, 8), 8)
    config = study.sampler.driver.client._experiment.optimization_config
    assert sorted(map(str, config.outcome_constraints)) == [
        "OutcomeConstraint(c0 <= 0)",
        "OutcomeConstraint(c1 <= 0)",
    ]
    model_based = study.trials[5:]  # after the centre and four Sobol points
    assert all(all(c <= 0 for c in t.constraints.values()) for t in model_based)
    blind = _constrained_study(peers.PEERS["ax"].build(0, SQUARE, 6), 6, constrained=False)
    assert blind.trials[5].params["x"] < 0.2 or blind.trials[5].params["y"] < 0
