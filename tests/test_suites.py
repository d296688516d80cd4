"""The generalisation suite: drawn, not chosen; split into parts; run by one command; its page
states the claims per part."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mixbo_compare import cli, report_suite, suites
from mixbo_compare.problems import get_problem, resolve
from mixbo_compare.pruners import unlabelled

FAMILIES = {
    "bbob-mixint",
    "relabelled",
    "re-instanced",
    "tabular-encoding",
    "sklearn",
    "binary",
    "conditional",
    "constrained",
    "pruned",
    "multi-objective",
}


def test_the_suite_is_drawn_reproducibly_and_split_in_two() -> None:
    members = suites.members()
    assert members == suites.members(suites.SEED)
    assert len(members) >= 30 and len({m.name for m in members}) == len(members)
    assert {m.family for m in members} == FAMILIES
    bbob = [m.name for m in members if m.family == "bbob-mixint"]
    assert sorted(int(n.split("-f")[1].split("-")[0]) for n in bbob) == list(range(1, 25))
    tuning = suites.problems("generalise-tuning")
    validation = suites.problems("generalise-validation")
    assert not set(tuning) & set(validation)
    assert sorted(tuning + validation) == sorted(suites.problems("generalise"))
    assert len(validation) >= 30 // 2 and len(tuning) >= 10
    for family in FAMILIES:  # a family of several members is judged on problems not tuned on
        names = [m for m in members if m.family == family]
        if len(names) > 1:
            assert {m.part for m in names} == {"tuning", "validation"}, family
    other = suites.members(suites.SEED + 1)
    assert [m.name for m in other] != [m.name for m in members]  # drawn, not listed


def test_every_member_is_a_problem_the_command_builds() -> None:
    for m in suites.members():
        resolve(unlabelled(m.name)[0])  # raises for an unknown name
        problem = get_problem(unlabelled(m.name)[0])  # and for an instance COCO does not have
        assert problem.space.params


def test_the_suite_option_fills_the_suites_defaults() -> None:
    args = cli.parser().parse_args(["--suite", "generalise-validation"])
    cli._fill_defaults(args)
    assert args.problems == suites.problems("generalise-validation")
    assert args.samplers == list(suites.DEFAULTS["samplers"])
    assert (args.seeds, args.trials) == (5, 100)
    assert args.out == "suite-results/generalise-validation"
    with pytest.raises(ValueError, match="unknown suite"):
        suites.problems("nope")


def _row(problem: str, part: str, **medians: float) -> report_suite.Row:
    """A problem whose samplers' finals on 5 seeds centre on ``medians``."""
    offsets = np.linspace(-0.1, 0.1, 5)
    finals = {s: {k: m + o for k, o in enumerate(offsets)} for s, m in medians.items()}
    return report_suite.Row(problem, "bbob-mixint", part, finals, 1.0)


def test_the_claims_count_wins_and_losses_beyond_tpe() -> None:
    rows = [_row(f"p{i}", "validation", mixbo=0.0, tpe=1.0, gp=1.0) for i in range(10)]
    rows.append(_row("lost", "validation", mixbo=5.0, tpe=1.0, gp=2.0))
    rows.append(_row("close", "validation", mixbo=1.0, tpe=1.05, gp=1.2))
    lines = report_suite.claims(rows)
    assert "**11 of 12** problems (92 %)" in lines[0]
    assert "significantly worse (p < 0.05) on 1 (lost)" in lines[0]
    assert "beyond TPE's IQR on 1 (lost)" in lines[1]
    paired = lines[-1]
    assert "Paired over 12 problems" in paired and "ahead" in paired
    p = float(paired.rsplit("p = ", 1)[1].rstrip("."))
    assert p < 0.05
    assert rows[-1].win() and not math.isnan(rows[-1].p_value())


def test_a_suite_run_writes_its_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = ["bbob-mixint-f1-d5@3", "func2c~5", "mo-zdt-mixed"]
    monkeypatch.setattr(suites, "problems", lambda suite: small)
    argv = ["--suite", "generalise", "-s", "tpe", "random", "--seeds", "2", "-n", "6"]
    argv += ["-o", str(tmp_path), "--jobs", "1", "--no-progress", "--quiet"]
    assert cli.main(argv) == 0
    page = (tmp_path / cli.SUITE_MD).read_text()
    assert page.startswith("# Generalisation suite: generalise")
    assert "| mo-zdt-mixed ↑ |" in page.replace("| - | - | ", "| ")
    assert "Not yet run:" in page  # the rest of the suite
