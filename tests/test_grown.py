"""A growing history's rows are encoded once per configuration, as a fresh encoding would."""

from __future__ import annotations

import numpy as np
import pytest

from common.space.conditions import Condition
from common.space.grown import GrownRows
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace

SPACE = MixedSpace([Float("x", 1e-3, 1.0, log=True), Integer("n", 0, 9), Categorical("c", "abc")])


def test_grown_rows_equal_a_fresh_encoding_and_encode_only_the_new_ones(monkeypatch) -> None:
    configs = SPACE.decode(SPACE.sample(30, np.random.default_rng(0)))
    rows = GrownRows()
    encoded: list[int] = []
    encode = MixedSpace.encode
    monkeypatch.setattr(MixedSpace, "encode", lambda s, c: encoded.append(len(c)) or encode(s, c))
    for n in (10, 10, 25, 30):
        X = rows.encode(SPACE, configs[:n])
        assert np.array_equal(X, encode(SPACE, configs[:n])) and not X.flags.writeable
    assert encoded == [10, 15, 5]  # each configuration once
    with pytest.raises(ValueError):
        X[0, 0] = 1.0  # kept for the next call: read-only


def test_other_objects_or_another_encoding_encode_anew() -> None:
    configs = SPACE.decode(SPACE.sample(8, np.random.default_rng(1)))
    rows = GrownRows()
    rows.encode(SPACE, configs)
    copies = [dict(c) for c in configs]
    assert np.array_equal(rows.encode(SPACE, copies[:4]), SPACE.encode(copies[:4]))
    conditional = SPACE.with_conditions([Condition(("n",), "c", (0,))])
    assert conditional == SPACE  # equal parameters, but another encoding
    assert np.array_equal(rows.encode(conditional, copies), conditional.encode(copies))
