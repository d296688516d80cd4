"""A JSON-lines file of finished benchmark runs, so long runs resume and reports combine."""

from __future__ import annotations

import json
import os
from collections.abc import Callable


def load_runs(path: str | None, key: Callable[[dict], tuple]) -> dict[tuple, dict]:
    """The runs recorded in ``path`` (none if it is ``None`` or absent), by ``key(run)``."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    return {key(r): r for r in runs}


def record_run(path: str | None, run: dict) -> None:
    """Append ``run`` to ``path`` (nothing if it is ``None``)."""
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(run) + "\n")
