"""The release habit: one version string (pyproject.toml's), read at run time from the installed
distribution's metadata, and a changelog whose newest entry is that version."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
from pathlib import Path

import pytest

from mixbo_compare import cli

ROOT = Path(__file__).resolve().parents[1]
VERSION = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M)[1]


def test_the_version_is_written_in_pyproject_only() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*.py", "*.txt", "*.cfg", "*.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    literal = re.compile(rf"(?<![\w.]){re.escape(VERSION)}(?![\w.])")
    holders = [f for f in tracked if literal.search((ROOT / f).read_text(errors="replace"))]
    assert holders == ["pyproject.toml"], "read it with importlib.metadata.version('mixbo')"


def test_the_changelog_starts_with_this_version() -> None:
    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert headings and headings[0] == VERSION, headings[:1]


def test_mixbo_compare_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    installed = importlib.metadata.version("mixbo")
    assert installed == VERSION, "reinstall (pip install -e .) after changing the version"
    with pytest.raises(SystemExit) as ended:
        cli.main(["--version"])
    assert ended.value.code == 0
    assert capsys.readouterr().out == f"mixbo-compare {VERSION}\n"
