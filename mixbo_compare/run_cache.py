"""A JSON-lines file of finished benchmark runs, so long runs resume and reports combine.

``mixbo-compare`` keeps ``runs.jsonl`` in its output folder: a run recorded there under the same
version is not run again. The version covers what decides a run's outcome, so a resumed table
never mixes runs of different code: for mixbo's samplers, :func:`code_version` (their source, the
problems', the study loop's and the versions of the libraries they run on; not the reporting, so
that rebuilding a page's text reruns nothing); for the baselines (Optuna's samplers and
the peers), :func:`baseline_version`, which leaves out mixbo's samplers (``common``,
``optuna_plugins``) and the reporting modules, so that stored baseline runs stay valid when
mixbo changes and only mixbo's rows are run again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from collections.abc import Callable
from pathlib import Path

# what decides a baseline run: the problems, the study loop and the search space's conversion
_BASELINE_SOURCES = (
    "mixbo_compare/problems",
    "mixbo_compare/peers",
    "mixbo_compare/runner.py",
    "mixbo_compare/multi_objective.py",
    "mixbo_compare/run_result.py",
    "mixbo_compare/simulated_workers.py",
    "mixbo_compare/study_loop.py",
    "mixbo_compare/pruners.py",
    "common/space/mixed_space.py",
)
# what decides a run of mixbo's samplers: theirs and the problems and study loop (not the peers,
# and not the command's reporting, which a page's rebuild changes without changing a run)
_MIXBO_SOURCES = (
    "common",
    "optuna_plugins",
    *(source for source in _BASELINE_SOURCES if source != "mixbo_compare/peers"),
)
# the libraries mixbo's samplers run on; the baselines' add the peers' own
_MIXBO_LIBRARIES = ("optuna", "torch", "gpytorch", "botorch", "numpy", "scipy")
_BASELINE_LIBRARIES = (*_MIXBO_LIBRARIES, "cmaes", "smac")


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
    """A short hash of the source files that decide a run of mixbo's samplers (``common``,
    ``optuna_plugins``, and the problems and study loop of :func:`baseline_version`; not the
    peers or the reporting) and the installed versions of the libraries those samplers run on, so
    that installing or upgrading a peer (SMAC3, CatCMA's ``cmaes``) keeps mixbo's stored runs."""
    return _version(_MIXBO_SOURCES, _MIXBO_LIBRARIES)


def baseline_version() -> str:
    """A short hash of the source files that decide a baseline's run (problems, study loop; not
    mixbo's samplers) and the versions of the libraries the baselines run on."""
    return _version(_BASELINE_SOURCES, _BASELINE_LIBRARIES)


def _version(sources: tuple[str, ...], libraries: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for source in sources:
        path = root / source
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(file.relative_to(root)).encode())
            digest.update(file.read_bytes())
    for library in libraries:
        try:
            version = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"{library}={version}".encode())
    return digest.hexdigest()[:16]
