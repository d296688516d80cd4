"""When two configurations are the same: the one definition every part of mixbo uses.

Two configurations of a :class:`MixedSpace` are the same when their encoded rows agree after
snapping onto the space (integers and stepped floats rounded to their grids, categories as
indices, everything clipped to the bounds) to 9 decimals of the unit-scaled range. So an integer
suggested as 2.9999 repeats 3, while two free floats that differ anywhere in their first nine
digits (of the range) are different trials: a near neighbour of the incumbent is a legitimate
suggestion, only an identical one wastes a trial.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import MixedSpace

DECIMALS = 9


class ConfigSet:
    """Configurations already evaluated, running or picked, to be suggested no more."""

    def __init__(self, space: MixedSpace, rows: np.ndarray | None = None) -> None:
        self.space = space
        self._keys: set[bytes] = set()
        if rows is not None:
            self.add(rows)

    def keys(self, rows: np.ndarray) -> list[bytes]:
        """The identity of each encoded row (see the module docstring)."""
        rows = np.asarray(rows, dtype=float).reshape(-1, self.space.dim)
        snapped = np.round(self.space.round(rows), DECIMALS) + 0.0  # + 0.0 merges -0.0 into 0.0
        return [r.tobytes() for r in snapped]

    def add(self, rows: np.ndarray) -> None:
        """Add encoded rows."""
        rows = np.asarray(rows, dtype=float)
        if rows.size:
            self._keys.update(self.keys(rows))

    def add_configs(self, configs: Iterable[Mapping[str, Any]]) -> None:
        """Add configurations; one outside the space (another search space's) is skipped.

        Encoded in one call (this runs on every suggestion over the whole history); only when
        that fails are they encoded one by one to skip the foreign ones."""
        configs = list(configs)
        if not configs:
            return
        try:
            self.add(self.space.encode(configs))
        except (KeyError, ValueError, TypeError):
            for config in configs:
                row = self.encode(config)
                if row is not None:
                    self.add(row)

    def encode(self, config: Mapping[str, Any]) -> np.ndarray | None:
        """``config``'s encoded row, or ``None`` if it is not a configuration of the space."""
        try:
            return self.space.encode([config])
        except (KeyError, ValueError, TypeError):
            return None

    def contains(self, rows: np.ndarray) -> np.ndarray:
        """Which encoded rows are already in the set."""
        rows = np.asarray(rows, dtype=float).reshape(-1, self.space.dim)
        if not self._keys or not len(rows):
            return np.zeros(len(rows), dtype=bool)
        return np.fromiter((k in self._keys for k in self.keys(rows)), bool, count=len(rows))

    def not_taken(self, configs: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The configurations of ``configs`` that are not in the set (one outside the space is
        not in it), encoded in one call where they all belong to the space."""
        configs = list(configs)
        if not configs:
            return []
        try:
            inside = self.contains(self.space.encode(configs))
        except (KeyError, ValueError, TypeError):
            return [config for config in configs if config not in self]
        return [config for config, taken in zip(configs, inside, strict=True) if not taken]

    def __contains__(self, config: Mapping[str, Any]) -> bool:
        row = self.encode(config)
        return row is not None and bool(self.contains(row)[0])

    def __len__(self) -> int:
        return len(self._keys)
