"""Discarded GP models are reclaimed by bytes: gpytorch models are reference cycles."""

from __future__ import annotations

import gc
import logging

import numpy as np
import pytest

import common.reclaim as reclaim
from common.engine import Observations, SuggestionEngine
from common.methods.casmopolitan.options import CasmopolitanOptions
from common.models.gp import SharedTrainGP
from common.space.mixed_space import Categorical, Float, MixedSpace

SPACE = MixedSpace([Float("x", -1.0, 1.0), Float("y", -1.0, 1.0), Categorical("c", [0, 1, 2])])


def live_models() -> int:
    return sum(type(o) is SharedTrainGP for o in gc.get_objects())


@pytest.fixture
def no_automatic_collection(monkeypatch):
    gc.collect()
    monkeypatch.setattr(reclaim, "_pending_bytes", 0)
    gc.disable()  # only explicit collections run: the test sees what the engine does
    yield
    gc.enable()
    gc.collect()


def run_model_suggestions(n: int) -> None:
    engine = SuggestionEngine(
        CasmopolitanOptions(n_init=5), name="Test", logger=logging.getLogger("test"), seed=0
    )
    rng = np.random.default_rng(0)
    configs = SPACE.decode(SPACE.sample(12, rng))
    values = [c["x"] ** 2 + c["y"] ** 2 + c["c"] for c in configs]
    for _ in range(n):
        seen = Observations(configs, values)
        s = engine.suggest(SPACE, seen, trial_index=len(configs), n_issued=len(configs))
        assert s.source == "model"
        configs.append(s.config)
        values.append(s.config["x"] ** 2 + s.config["y"] ** 2 + s.config["c"])


def test_models_outlive_their_suggestion_until_a_full_collection(
    no_automatic_collection, monkeypatch
) -> None:
    monkeypatch.setattr(reclaim, "BUDGET_BYTES", 2**60)  # never collect
    before = live_models()
    run_model_suggestions(3)
    assert live_models() >= before + 3  # unreferenced, but cycles: they wait for the collector
    gc.collect()
    assert live_models() == before


def test_the_engine_collects_discarded_models_once_their_matrices_reach_the_budget(
    no_automatic_collection, monkeypatch
) -> None:
    monkeypatch.setattr(reclaim, "BUDGET_BYTES", 1)  # collect after every model suggestion
    before = live_models()
    run_model_suggestions(3)
    assert live_models() == before


def test_the_budget_counts_the_matrices_of_each_suggestion(monkeypatch) -> None:
    monkeypatch.setattr(reclaim, "_pending_bytes", 0)
    per_suggestion = reclaim.MATRICES_PER_SUGGESTION * 8 * 100**2
    monkeypatch.setattr(reclaim, "BUDGET_BYTES", 3 * per_suggestion)
    collections = []
    monkeypatch.setattr(gc, "collect", lambda: collections.append(1))
    assert [reclaim.after_model_suggestion(100) for _ in range(7)] == [
        False,
        False,
        True,
        False,
        False,
        True,
        False,
    ]
    assert len(collections) == 2
