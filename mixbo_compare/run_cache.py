"""A JSON-lines file of finished benchmark runs, so long runs resume and reports combine.

``mixbo-compare`` keeps ``runs.jsonl`` in its output folder: a run recorded there under the same
version is not run again. The version covers what decides a run's outcome, and nothing else, so
a resumed table never mixes runs of different code and a change reruns only the runs it can
change: for mixbo's samplers, :func:`code_version` (their source, the study loop's and the
versions of the libraries they run on; not the reporting, so that rebuilding a page's text reruns
nothing); for a baseline, :func:`baseline_version` of that baseline (an Optuna sampler's leaves
out mixbo's samplers and the peers; a peer's adds its own adapter and package only), so that
upgrading SMAC3 reruns SMAC3's rows and nothing else. Each run's record is then stamped with
:func:`task_version`, which adds the source of its own problem only (:func:`problem_version`), so
that adding or editing one problem keeps every other problem's stored runs: a suite's baselines
are computed once.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import json
import os
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from mixbo_compare.peers import PEERS
from mixbo_compare.problems import resolve
from mixbo_compare.pruners import unlabelled
from mixbo_compare.runner import is_ours

# what decides any sampler's run on any problem: the study loop, the search space's conversion and
# what every problem shares (a problem's own module is in its task's version, task_version)
_RUN_SOURCES = (
    "mixbo_compare/problems/problem.py",
    "mixbo_compare/problems/relabel.py",
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


def task_version(sampler_version: str, problem: str) -> str:
    """The version a run of ``problem`` by a sampler of version ``sampler_version`` is recorded
    under: the sampler's, and the source of that problem's own modules."""
    return hashlib.sha256(f"{sampler_version} {problem_version(problem)}".encode()).hexdigest()[:16]


@cache
def problem_version(problem: str) -> str:
    """A short hash of what builds ``problem`` (a ``mixbo-compare`` name, pruner label allowed):
    its factory and arguments and the source of its module and of the problem modules that
    module imports; empty for a name the registry does not know (a user's objective, whose
    version the command adds itself)."""
    try:
        module, factory, kwargs = resolve(unlabelled(problem)[0])
    except ValueError:
        return ""
    digest = hashlib.sha256(repr((module, factory, sorted(kwargs.items()))).encode())
    root = Path(__file__).resolve().parents[1]
    for name in sorted(_problem_modules(module)):
        path = root / (name.replace(".", "/") + ".py")
        digest.update(name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@cache
def _problem_modules(module: str) -> frozenset[str]:
    """``module`` and the ``mixbo_compare.problems`` modules it imports, transitively."""
    root = Path(__file__).resolve().parents[1]
    found = {module}
    tree = ast.parse((root / (module.replace(".", "/") + ".py")).read_text())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if (
                name.startswith("mixbo_compare.problems.")
                and (root / (name.replace(".", "/") + ".py")).exists()
            ):
                found |= _problem_modules(name)
    return frozenset(found)


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
