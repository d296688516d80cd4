"""Where a results folder came from: the command, the code, the libraries and the machine.

``mixbo-compare`` writes ``provenance.json`` beside its CSV files when it starts, and every table
built from the folder (its ``results.md``, the pages in ``docs/results``) opens with the stamp
:func:`stamp` makes of it, so a figure can always be traced to the commit and the machine that
produced it.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PROVENANCE_JSON = "provenance.json"
LIBRARIES = ("optuna", "torch", "gpytorch", "botorch", "numpy", "scipy")


def git_commit(root: Path) -> str:
    """The checkout's commit (``-dirty`` when tracked files that can change a measurement differ
    from it), or ``"unknown"`` outside a git checkout. ``docs/`` (where measurements write their
    runs and pages) and Markdown files elsewhere cannot: a note edited while a benchmark runs does
    not make its stamp dirty."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        if done.returncode:
            raise OSError(done.stderr)
        return done.stdout.strip()

    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        outputs = (":(exclude)docs", ":(exclude,glob)**/*.md")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", *outputs)
    except OSError:
        return "unknown"
    return commit + ("-dirty" if dirty else "")


def cpu_name() -> str:
    """The processor's model name (Linux's ``/proc/cpuinfo``), else what :mod:`platform` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def collect(command: str, jobs: int, packages: Sequence[str] = ()) -> dict[str, Any]:
    """The provenance of a comparison about to run as ``command`` in ``jobs`` processes; the
    versions of :data:`LIBRARIES` and of ``packages`` (the peers' distributions it runs)."""
    versions = {"python": platform.python_version()}
    for library in dict.fromkeys((*LIBRARIES, *packages)):
        try:
            versions[library] = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            versions[library] = "-"
    return {
        "command": command,
        "commit": git_commit(Path(__file__).resolve().parents[1]),
        "versions": versions,
        "cpu": cpu_name(),
        "cores": os.cpu_count() or 1,
        "jobs": jobs,
        "date": datetime.date.today().isoformat(),
    }


def write(folder: str | os.PathLike, provenance: dict[str, Any]) -> None:
    Path(folder, PROVENANCE_JSON).write_text(json.dumps(provenance, indent=1) + "\n")


def read(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The folder's provenance, or ``None`` for a folder written before it was recorded."""
    path = Path(folder, PROVENANCE_JSON)
    return json.loads(path.read_text()) if path.exists() else None


def stamp(provenance: dict[str, Any]) -> list[str]:
    """Markdown lines that say where a table's runs came from."""
    versions = ", ".join(f"{k} {v}" for k, v in provenance["versions"].items())
    codes = provenance.get("baseline_codes", {})
    baselines = (
        " Baselines' runs under their own hashes ("
        + ", ".join(f"{sampler} `{code}`" for sampler, code in codes.items())
        + "; the problems', the study loop's and, for a peer, its adapter's source, so that they"
        " are reused when only mixbo's samplers or another baseline change)."
        if codes
        else ""
    )
    cached = (  # a comparison's runs; a timing has no cache
        f"; runs cached under source hash `{provenance['code']}` (a hash of mixbo's source files "
        "and the library versions, not a commit: a later run of the same code reuses them)."
        if "code" in provenance
        else "."
    )
    return [
        f"Command: `{provenance['command']}`",
        "",
        f"- Code: mixbo at commit `{provenance['commit']}`" + cached + baselines,
        f"- Libraries: {versions}.",
        f"- Machine: {provenance['cpu']}, {provenance['cores']} cores; {provenance['jobs']} "
        "process(es) at once, each on one torch and one BLAS thread; run on "
        f"{provenance['date']}.",
        *reused_line(provenance),
        "",
    ]


_ORIGIN = ("commit", "cpu", "date")


def with_reused(provenance: dict[str, Any], earlier: dict[str, Any]) -> dict[str, Any]:
    """``provenance`` of a command that reused runs of the ``earlier`` stamp's folder: where those
    ran (and where the runs the earlier command reused ran) is kept under ``"reused"``, so that a
    page's timings are not all credited to the machine of its last command."""
    origins = [*earlier.get("reused", []), {k: earlier.get(k) for k in _ORIGIN}]
    here = {k: provenance.get(k) for k in _ORIGIN}
    kept = []
    for origin in origins:
        if origin != here and origin not in kept:
            kept.append(origin)
    return {**provenance, "reused": kept} if kept else provenance


def reused_line(provenance: dict[str, Any]) -> list[str]:
    """The stamp's line on runs reused from earlier commands (none without any)."""
    origins = provenance.get("reused", [])
    if not origins:
        return []
    where = "; ".join(
        f"{o['cpu']} on {o['date']} (commit `{str(o['commit'])[:12]}`)" for o in origins
    )
    return [f"- Some runs were reused from earlier commands into this folder, run on: {where}."]
