"""Conditional spaces: conditions learned from trials, canonical encodings, flat acquisition."""

import numpy as np
import pytest
import torch

from common.space.conditioning import conditioned, infer_conditions
from common.space.conditions import Condition
from common.space.configset import ConfigSet
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace

SPACE = MixedSpace(
    [
        Categorical("clf", ("svm", "forest", "mlp")),
        Float("C", 1e-3, 1e3, log=True),
        Integer("depth", 1, 20),
        Integer("n_layers", 1, 3),
        Float("width_2", 0, 1),
        Float("lr", 0, 1),
    ]
)
TRIALS = [
    {"clf": "svm", "C": 1.0, "lr": 0.1},
    {"clf": "forest", "depth": 5, "lr": 0.2},
    {"clf": "mlp", "n_layers": 1, "lr": 0.3},
    {"clf": "mlp", "n_layers": 3, "width_2": 0.4, "lr": 0.3},
    {"clf": "mlp", "n_layers": 2, "width_2": 0.9, "lr": 0.3},
]


def test_parents_are_found_from_the_trials_most_specific_first() -> None:
    conditions = {c.params: c for c in infer_conditions(SPACE, TRIALS)}
    assert conditions[("C",)] == Condition(("C",), "clf", (0,))
    assert conditions[("depth",)] == Condition(("depth",), "clf", (1,))
    assert conditions[("n_layers",)] == Condition(("n_layers",), "clf", (2,))
    # n_layers, not clf (mlp trials without width_2 exist), with a threshold: n_layers >= 2
    assert conditions[("width_2",)] == Condition(("width_2",), "n_layers", (), (2.0, 3.0))
    order = [c.params for c in infer_conditions(SPACE, TRIALS)]
    assert order.index(("n_layers",)) < order.index(("width_2",))


def test_a_group_without_a_discrete_parent_is_always_active() -> None:
    space = MixedSpace([Float("x", 0, 1), Float("y", 0, 1)])
    configs = [{"x": 0.1, "y": 0.5}, {"x": 0.9}]  # y present or not, whatever x is
    (condition,) = infer_conditions(space, configs)
    assert condition == Condition(("y",))
    X = conditioned(space, configs).encode(configs)
    assert X[1, 1] == 0.5 and conditioned(space, configs).active_mask(X).all()


def test_a_space_without_missing_parameters_is_left_as_it_is() -> None:
    full = [{"clf": "svm", "C": 1, "depth": 3, "n_layers": 1, "width_2": 0.1, "lr": 0.5}]
    assert conditioned(SPACE, full) is SPACE


def test_inactive_parameters_are_imputed_and_rows_are_canonical() -> None:
    space = conditioned(SPACE, TRIALS)
    X = space.encode(TRIALS)
    active = space.active_mask(X)
    column = {p.name: j for j, p in enumerate(space.modelled)}
    for row, config, used in zip(X, TRIALS, active, strict=True):
        for name, j in column.items():
            assert used[j] == (name in config)
            if name not in config:
                assert row[j] == space.impute_row[j]
    # a full configuration of the svm branch, with values for every other parameter, is the
    # same configuration as the svm trial: unused parameters do not count
    full = {"clf": "svm", "C": 1.0, "depth": 17, "n_layers": 3, "width_2": 0.77, "lr": 0.1}
    assert full in ConfigSet(space, X)
    assert {**full, "C": 2.0} not in ConfigSet(space, X)


def test_samples_and_decoded_rows_follow_the_conditions() -> None:
    space = conditioned(SPACE, TRIALS)
    rows = space.sample(200, np.random.default_rng(0))
    np.testing.assert_array_equal(rows, space.canonical(rows))
    for config in space.decode(rows):
        assert set(config) == set(SPACE.names)  # every parameter has a valid value
        assert 1e-3 <= config["C"] <= 1e3 and 1 <= config["depth"] <= 20


def test_the_acquisition_is_flat_along_inactive_parameters() -> None:
    from botorch.acquisition import AcquisitionFunction

    from common.acquisition.functions import CanonicalInputs

    class SumOfInputs(AcquisitionFunction):
        def forward(self, X: torch.Tensor) -> torch.Tensor:
            return X.sum(dim=(-1, -2))

    space = conditioned(SPACE, TRIALS)
    acqf = CanonicalInputs(SumOfInputs(model=None), space.active_mask, space.impute_row)
    svm = space.encode([{"clf": "svm", "C": 1.0, "lr": 0.1}])
    moved = svm.copy()
    moved[0, 2] = 0.9  # depth: not used by the svm
    X = torch.tensor(np.vstack([svm, moved])[:, None, :], requires_grad=True)
    values = acqf(X)
    assert values[0] == values[1]
    values.sum().backward()
    assert X.grad[0, 0, 2] == 0 and X.grad[0, 0, 5] == 1  # depth flat, lr not


@pytest.mark.parametrize("method", ["cocabo", "casmopolitan", "bofm"])
def test_every_method_suggests_a_configuration_of_a_branch(method) -> None:
    from common.batch.busy import BusyPolicy
    from common.methods.bofm.options import BOFMOptions
    from common.methods.casmopolitan.options import CasmopolitanOptions
    from common.methods.cocabo.options import CoCaBOOptions
    from common.space.history import History

    options = {"cocabo": CoCaBOOptions, "casmopolitan": CasmopolitanOptions, "bofm": BOFMOptions}
    strategy = (
        options[method](n_init=3).make(BusyPolicy())
        if method != "bofm"
        else (BOFMOptions().make(BusyPolicy()))
    )
    rng = np.random.default_rng(0)
    configs = [*TRIALS, *conditioned(SPACE, TRIALS).decode(SPACE.sample(5, rng))]
    values = [float(c["lr"]) + 0.1 * i for i, c in enumerate(configs)]
    history = History.from_lists(configs, values)
    space = conditioned(SPACE, configs)
    (config,) = strategy.suggest(space, history, 1, rng)
    assert set(config) == set(SPACE.names)
    assert config not in ConfigSet(space, space.encode(configs))
