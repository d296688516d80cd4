"""Discarded GP models are freed by reference counting: no collection on the suggestion path."""

from __future__ import annotations

import copy
import gc
import logging
import weakref

import numpy as np
import pytest
import torch

from common.engine import Observations, SuggestionEngine
from common.methods.bofm.options import BOFMOptions
from common.methods.casmopolitan.options import CasmopolitanOptions
from common.methods.cocabo.options import CoCaBOOptions
from common.methods.mixbo import MixboOptions
from common.methods.options import MethodOptions
from common.models.gp import SharedTrainGP, fit_gp
from common.models.kernels.mixture import casmopolitan_kernels
from common.space.mixed_space import Categorical, Float, MixedSpace

SPACE = MixedSpace([Float("x", -1.0, 1.0), Float("y", -1.0, 1.0), Categorical("c", [0, 1, 2])])


def live_models() -> int:
    return sum(type(o) is SharedTrainGP for o in gc.get_objects())


@pytest.fixture
def no_collection(monkeypatch):
    """The collector off, and any collection the code under test asks for recorded."""
    gc.collect()
    collections: list[tuple] = []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *args: collections.append(args) or 0)
    gc.disable()  # Python's own schedule does not run either: only reference counting frees
    yield collections
    gc.enable()
    collect()


def fitted_model() -> SharedTrainGP:
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.random((20, 2)), rng.integers(0, 3, (20, 1))]).astype(float)
    model, _ = fit_gp(X, (X**2).sum(axis=1), casmopolitan_kernels([0, 1], [2])[0])
    model.posterior(torch.as_tensor(X[:4]))  # its factor and prediction caches computed
    return model


def test_a_discarded_model_is_freed_without_a_collection(no_collection) -> None:
    model = fitted_model()
    copied = copy.deepcopy(model)  # as gpytorch copies a model for fantasies
    alive = weakref.ref(model), weakref.ref(copied)
    del model, copied
    assert [ref() for ref in alive] == [None, None]


def test_an_acyclic_model_keeps_its_hooks_and_priors() -> None:
    model = fitted_model()
    model.load_state_dict(model.state_dict())  # the hooks run, reaching their module weakly
    copied = copy.deepcopy(model)
    priors = {name: (m, get, put) for name, m, _, get, put in copied.named_priors()}
    module, get, put = priors["likelihood.noise_covar.noise_prior"]
    with torch.no_grad():
        put(module, model.likelihood.noise * 2)  # the copy's own noise, set and read
    assert torch.allclose(get(module), model.likelihood.noise * 2)
    assert torch.equal(get(module), copied.likelihood.noise)


@pytest.mark.parametrize(
    "options",
    [CasmopolitanOptions(n_init=5), MixboOptions(n_init=5), CoCaBOOptions(n_init=5), BOFMOptions()],
    ids=["casmopolitan", "mixbo", "cocabo", "bofm"],
)
def test_model_suggestions_leave_nothing_for_the_collector(
    no_collection, options: MethodOptions
) -> None:
    engine = SuggestionEngine(options, name="Test", logger=logging.getLogger("test"), seed=0)
    rng = np.random.default_rng(0)
    configs = SPACE.decode(SPACE.sample(12, rng))
    values = [c["x"] ** 2 + c["y"] ** 2 + c["c"] for c in configs]
    before = live_models()
    for _ in range(3):
        seen = Observations(configs, values)
        s = engine.suggest(SPACE, seen, trial_index=len(configs), n_issued=len(configs))
        assert s.source == "model"
        configs.append(s.config)
        values.append(s.config["x"] ** 2 + s.config["y"] ** 2 + s.config["c"])
    assert live_models() - before <= 3  # those the strategy keeps for its next refit
    del engine
    assert live_models() == before  # freed with their strategy, by reference counting
    assert no_collection == []  # and no collection was forced on the way
