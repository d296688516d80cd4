"""When two configurations are the same (:mod:`common.space.configset`)."""

from __future__ import annotations

import numpy as np

from common.space.configset import ConfigSet
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace


def test_the_same_configuration_is_decided_on_the_space_grid() -> None:
    space = MixedSpace([Integer("n", 1, 9), Float("x", 0.0, 1.0), Float("q", 0.0, 1.0, step=0.25)])
    taken = ConfigSet(space)
    taken.add_configs([{"n": 3, "x": 0.5, "q": 0.5}])
    assert {"n": 3, "x": 0.5, "q": 0.5} in taken
    assert {"n": 3, "x": 0.5 + 1e-7, "q": 0.5} not in taken  # a neighbour is another trial
    rows = space.encode([{"n": 3, "x": 0.5, "q": 0.5}])
    nudged = rows + np.array([[0.01, 0.0, 0.01]])  # off-grid integer and step: the same point
    assert taken.contains(nudged)[0]
    assert {"n": 3, "x": 0.5} not in taken  # another space's configuration is not in it


def test_rounding_noise_and_signed_zero_are_the_same_row() -> None:
    space = MixedSpace([Float("x", 0.0, 1.0), Categorical("c", ("a", "b"))])
    taken = ConfigSet(space, np.array([[0.0, 1.0], [0.25, 0.0]]))
    probe = np.array([[-0.0, 1.0], [0.25 + 1e-12, 0.0], [0.2501, 0.0], [0.0, 0.0]])
    assert taken.contains(probe).tolist() == [True, True, False, False]
    taken.add(np.empty((0, 2)))  # nothing to add
    assert len(taken) == 2
    assert not ConfigSet(space).contains(probe).any()


def test_configurations_of_another_space_are_skipped_and_the_rest_kept() -> None:
    space = MixedSpace([Integer("n", 1, 9), Categorical("c", ("a", "b"))])
    taken = ConfigSet(space)
    taken.add_configs([{"n": 2, "c": "a"}, {"n": 3}, {"n": 4, "c": "z"}, {"n": 5, "c": "b"}])
    assert len(taken) == 2
    assert {"n": 2, "c": "a"} in taken and {"n": 5, "c": "b"} in taken


def test_not_taken_keeps_the_configurations_not_in_the_set_in_order() -> None:
    """What a claim check keeps of the others' configurations: those not in the set, in their
    order, including any outside the space (``not in`` per configuration, in one encoding)."""
    space = MixedSpace([Integer("n", 1, 9), Categorical("c", ("a", "b"))])
    taken = ConfigSet(space)
    taken.add_configs([{"n": 2, "c": "a"}, {"n": 5, "c": "b"}])
    ours = [{"n": 3, "c": "a"}, {"n": 2, "c": "a"}, {"n": 5, "c": "a"}]
    assert taken.not_taken(ours) == [{"n": 3, "c": "a"}, {"n": 5, "c": "a"}]
    foreign = [{"n": 5, "c": "b"}, {"n": 4}, {"n": 6, "c": "b"}]
    assert taken.not_taken(foreign) == [{"n": 4}, {"n": 6, "c": "b"}]
    assert taken.not_taken([]) == []
