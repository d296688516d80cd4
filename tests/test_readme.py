"""The README's code runs as pasted: each ``python`` block executes on its own, in a fresh
interpreter (the Ray block starts and stops a local Ray instance)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_has_an_optuna_and_a_ray_example() -> None:
    assert any("optuna_plugins" in b for b in BLOCKS)
    assert any("ray_plugins" in b and "tuner.fit()" in b for b in BLOCKS)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_a_readme_block_runs_as_pasted(code: str, run_as_user) -> None:
    if "ray_plugins" in code:
        pytest.importorskip("ray.tune")
    out = run_as_user("-c", code)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip(), "the example prints its result"


def test_the_readme_stays_a_page_for_users() -> None:
    """At most 270 lines and no commit hashes: measurements live in the generated pages."""
    text = README.read_text()
    assert len(text.splitlines()) <= 270
    hashes = [h for h in re.findall(r"\b[0-9a-f]{7,40}\b", text) if re.search(r"[a-f]", h)]
    assert not [h for h in hashes if re.search(r"\d", h)], hashes
