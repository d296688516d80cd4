"""The encoded rows of a history that only grows, encoded once per configuration.

Every suggestion encodes the whole history (the taken configurations, the strategy's model
rows); in a long study that pass over every trial grows into a good share of a suggestion. The
adapters hand the engine the same configuration objects on every call (a finished trial never
changes), so a list that begins with the last call's configurations, the same objects in the
same order, over a space that encodes them the same way, encodes only its new ones.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from common.space.mixed_space import MixedSpace


def encoding_key(space: MixedSpace) -> tuple:
    """What a space's encoding depends on: its parameters and its conditions (equal spaces
    compare their parameters only)."""
    return (space.params, space.conditions)


class GrownRows:
    """``encode(space, configs)``: ``space.encode(configs)``, continued from the last call's rows
    where ``configs`` begins with the last call's configurations (by identity) over a space of
    the same :func:`encoding_key`. The rows it returns are read-only: they are kept for the next
    call."""

    def __init__(self) -> None:
        self._last: tuple[tuple, tuple[Mapping[str, Any], ...], np.ndarray] | None = None

    def encode(self, space: MixedSpace, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """The encoded rows of ``configs`` (raises as :meth:`MixedSpace.encode` does)."""
        configs, key, last = tuple(configs), encoding_key(space), self._last
        if (
            last is not None
            and last[0] == key
            and len(last[1]) <= len(configs)
            and all(map(operator.is_, last[1], configs))
        ):
            n = len(last[1])
            X = last[2] if n == len(configs) else np.vstack([last[2], space.encode(configs[n:])])
        else:
            X = space.encode(configs)
        X.setflags(write=False)
        self._last = (key, configs, X)
        return X

    def __getstate__(self) -> dict[str, Any]:
        return {"_last": None}  # a copy encodes anew
