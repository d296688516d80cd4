"""A JSON-lines file of finished benchmark runs, so long runs resume and reports combine.

``mixbo-compare`` keeps ``runs.jsonl`` in its output folder: a run recorded there under the same
:func:`code_version` is not run again. The version covers what decides a run's outcome (mixbo's
source and the versions of the libraries the samplers run on), so a resumed table never mixes
runs of different code.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from collections.abc import Callable
from pathlib import Path

_PACKAGES = ("common", "optuna_plugins", "mixbo_compare")
_LIBRARIES = ("optuna", "torch", "gpytorch", "botorch", "numpy", "scipy", "cmaes", "smac")


def load_runs(path: str | os.PathLike | None, key: Callable[[dict], tuple]) -> dict[tuple, dict]:
    """The runs recorded in ``path`` (none if it is ``None`` or absent), by ``key(run)``; a line
    cut short by an interruption is skipped."""
    if not path or not os.path.exists(path):
        return {}
    runs = []
    with open(path) as f:
        for line in f:
            try:
                runs.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return {key(r): r for r in runs}


def record_run(path: str | os.PathLike | None, run: dict) -> None:
    """Append ``run`` to ``path`` (nothing if it is ``None``)."""
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(run) + "\n")


def code_version() -> str:
    """A short hash of mixbo's source files and the installed versions of the libraries its
    samplers and the baselines run on."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    for library in _LIBRARIES:
        try:
            version = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"{library}={version}".encode())
    return digest.hexdigest()[:16]
