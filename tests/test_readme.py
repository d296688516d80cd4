"""The README's code runs as pasted: each ``python`` block executes on its own, in a fresh
interpreter (the Ray block starts and stops a local Ray instance)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_has_an_optuna_and_a_ray_example() -> None:
    assert any("optuna_plugins" in b for b in BLOCKS)
    assert any("ray_plugins" in b and "tuner.fit()" in b for b in BLOCKS)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_a_readme_block_runs_as_pasted(code: str, tmp_path: Path) -> None:
    if "ray_plugins" in code:
        pytest.importorskip("ray.tune")
    # a temporary home: Ray Tune writes its results under ~/ray_results, never the user's here
    env = {**os.environ, "HOME": str(tmp_path), "RAY_USAGE_STATS_ENABLED": "0"}
    env["PYTHONPATH"] = os.pathsep.join([str(README.parent), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip(), "the example prints its result"
