"""The one greedy batch loop: each pick of a batch sees the pending points and the batch's earlier
picks as busy points (PLAyBOOK, Alvi et al., ICML 2019), so one suggestion and a batch of ``n``
run the same code."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.space.configset import ConfigSet


def greedy_batch(
    pick: Callable[[int, np.ndarray], np.ndarray],
    n: int,
    busy: np.ndarray,
    taken: ConfigSet | None = None,
) -> np.ndarray:
    """``n`` rows, one ``pick(i, busy_rows)`` each: ``busy_rows`` are ``busy`` (the pending rows)
    and the batch's picks so far; each pick joins ``taken`` (if given), so the next avoids it."""
    rows: list[np.ndarray] = []
    for i in range(n):
        row = np.asarray(pick(i, np.vstack([busy, *rows]) if rows else busy), dtype=float)
        row = row.reshape(1, -1)
        rows.append(row)
        if taken is not None:
            taken.add(row)
    return np.vstack(rows)
