"""Each example runs as a user runs it, in a fresh interpreter whose home folder is temporary (so
Ray Tune's results never land in the user's ``~/ray_results``)."""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RUNS = {  # example -> its arguments, kept short for the tests
    "quickstart.py": [],
    "multi_objective.py": [],
    "compare_objectives.py": ["--trials", "8", "--seeds", "1"],
    "ray_tune_quickstart.py": ["--num-samples", "6", "--concurrency", "2"],
}


def test_every_example_is_run_here() -> None:
    assert {p.name for p in EXAMPLES.glob("*.py")} == set(RUNS)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_an_example_runs(name: str, tmp_path: Path, run_as_user) -> None:
    if name.startswith("ray"):
        pytest.importorskip("ray.tune")
    out = run_as_user(str(EXAMPLES / name), *RUNS[name])
    assert out.returncode == 0, out.stderr[-3000:]
    assert "best" in out.stdout.lower(), out.stdout[-2000:]
    if name.startswith("ray"):  # Tune wrote under the temporary home, not the user's
        assert (tmp_path / "ray_results").is_dir()
