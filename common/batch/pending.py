"""The busy points a suggestion sees: the history's pending configurations, encoded."""

from __future__ import annotations

import numpy as np

from common.space.history import History
from common.space.mixed_space import MixedSpace


def encode_pending(space: MixedSpace, history: History) -> np.ndarray:
    """The pending configurations encoded (``(p, dim)``); one outside ``space`` is skipped."""
    rows = []
    for config in history.pending:
        try:
            rows.append(space.encode([config])[0])
        except (KeyError, ValueError, TypeError):
            continue
    return np.asarray(rows, dtype=float).reshape(-1, space.dim)
