"""Each example runs as a user runs it, in a fresh interpreter whose home folder is temporary (so
Ray Tune's results never land in the user's ``~/ray_results``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RUNS = {  # example -> its arguments, kept short for the tests
    "quickstart.py": [],
    "ray_tune_quickstart.py": ["--num-samples", "6", "--concurrency", "2"],
}


def test_every_example_is_run_here() -> None:
    assert {p.name for p in EXAMPLES.glob("*.py")} == set(RUNS)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_an_example_runs(name: str, tmp_path: Path) -> None:
    if name.startswith("ray"):
        pytest.importorskip("ray.tune")
    env = {**os.environ, "HOME": str(tmp_path), "RAY_USAGE_STATS_ENABLED": "0"}
    env["PYTHONPATH"] = os.pathsep.join([str(EXAMPLES.parent), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *RUNS[name]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "best" in out.stdout.lower(), out.stdout[-2000:]
    if name.startswith("ray"):  # Tune wrote under the temporary home, not the user's
        assert (tmp_path / "ray_results").is_dir()
