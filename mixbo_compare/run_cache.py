"""A JSON-lines file of finished benchmark runs, so long runs resume and reports combine.

``mixbo-compare`` keeps ``runs.jsonl`` in its output folder: a run recorded there under the same
version is not run again. The version covers what decides a run's outcome, and nothing else, so
a resumed table never mixes runs of different code and a change reruns only the runs it can
change: for mixbo's samplers, :func:`code_version` (their source, the problems', the study
loop's and the versions of the libraries they run on; not the reporting, so that rebuilding a
page's text reruns nothing); for a baseline, :func:`baseline_version` of that baseline (an Optuna
sampler's leaves out mixbo's samplers and the peers; a peer's adds its own adapter and package
only), so that upgrading SMAC3 reruns SMAC3's rows and nothing else.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from mixbo_compare.peers import PEERS
from mixbo_compare.runner import is_ours

# what decides any sampler's run: the problems, the study loop and the search space's conversion
_RUN_SOURCES = (
    "mixbo_compare/problems",
    "mixbo_compare/runner.py",
    "mixbo_compare/multi_objective.py",
    "mixbo_compare/run_result.py",
    "mixbo_compare/simulated_workers.py",
    "mixbo_compare/study_loop.py",
    "mixbo_compare/pruners.py",
    "common/space/mixed_space.py",
)
# what a run of mixbo's samplers adds: their source (not the command's reporting, which a page's
# rebuild changes without changing a run)
_MIXBO_SOURCES = ("common", "optuna_plugins", *_RUN_SOURCES)
# what every peer's run adds: the registry and the sampler all peers share (then its own module)
_PEER_SOURCES = ("mixbo_compare/peers/__init__.py", "mixbo_compare/peers/_sampler.py")
# the libraries every run uses (Optuna's GPSampler and Ax run on torch and BoTorch too); a peer
# adds its own package
_LIBRARIES = ("optuna", "torch", "gpytorch", "botorch", "numpy", "scipy")


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
    ``optuna_plugins``, the problems and the study loop; not the peers or the reporting) and the
    installed versions of the libraries those samplers run on."""
    return _version(_MIXBO_SOURCES, _LIBRARIES)


def baseline_version(sampler: str) -> str:
    """A short hash of what decides a run of baseline ``sampler``: for Optuna's samplers the
    problems, the study loop and the libraries (not mixbo's samplers, not the peers); for a peer
    also the peers' shared sampler, its own adapter module and its own package's version."""
    peer = PEERS.get(sampler)
    if peer is None:
        return _version(_RUN_SOURCES, _LIBRARIES)
    adapter = peer.module.replace(".", "/") + ".py"
    return _version((*_RUN_SOURCES, *_PEER_SOURCES, adapter), (*_LIBRARIES, peer.distribution))


def run_versions(samplers: Sequence[str]) -> dict[str, str]:
    """Each sampler's version: :func:`code_version` for mixbo's, :func:`baseline_version` for
    the others."""
    mixbo = code_version()
    return {s: mixbo if is_ours(s) else baseline_version(s) for s in samplers}


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
