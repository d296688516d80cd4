"""The OptunaHub package (``optunahub-package/samplers/mixbo``) loads as OptunaHub loads a local
package and runs a study; its folder has the files the registry asks for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import optuna
import pytest

optunahub = pytest.importorskip("optunahub")

REGISTRY = Path(__file__).resolve().parents[1] / "optunahub-package"
PACKAGE = REGISTRY / "samplers" / "mixbo"


def test_the_package_has_the_registrys_files_and_front_matter() -> None:
    for name in ("__init__.py", "README.md", "LICENSE", "example.py", "requirements.txt"):
        assert (PACKAGE / name).is_file(), name
    front = PACKAGE.joinpath("README.md").read_text().split("---")[1]
    for key in ("author:", "title:", "description:", "tags:", "optuna_versions:", "license:"):
        assert key in front
    assert "sampler" in front.split("tags:")[1].splitlines()[0]


def test_optunahub_loads_the_package_and_its_sampler_runs_a_mixed_study() -> None:
    import optuna_plugins

    module = optunahub.load_local_module("samplers/mixbo", registry_root=str(REGISTRY))
    assert module.MixboSampler is optuna_plugins.MixboSampler
    assert set(module.__all__) == set(optuna_plugins.__all__)

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", -2.0, 2.0)
        k = trial.suggest_int("k", 0, 4)
        c = trial.suggest_categorical("c", ["a", "b", "c"])
        return (x - 0.5) ** 2 + (k - 3) ** 2 + (c != "b")

    study = optuna.create_study(sampler=module.MixboSampler(seed=0, n_startup_trials=5))
    study.optimize(objective, n_trials=12)
    assert len(study.trials) == 12
    assert study.best_value < min(t.value for t in study.trials[:5])  # the model improved on it


LOAD_WITHOUT = """
import importlib.abc, sys
import optunahub


class Missing(importlib.abc.MetaPathFinder):  # the module is not installed
    def find_spec(self, name, path=None, target=None):
        if name == {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)


sys.meta_path.insert(0, Missing())
optunahub.load_local_module("samplers/mixbo", registry_root={registry!r})
"""


@pytest.mark.parametrize("blocked", ["optuna_plugins", "common"])
def test_loading_without_mixbo_says_how_to_install_it(blocked: str) -> None:
    """A user without mixbo is told how to get it; any other missing module is not masked."""
    code = LOAD_WITHOUT.format(blocked=blocked, registry=str(REGISTRY))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    if blocked == "optuna_plugins":
        assert last.startswith("ImportError: samplers/mixbo needs the mixbo distribution"), last
        assert "pip install /path/to/mixbo" in last and "pip install dist/mixbo-*.whl" in last
    else:
        assert last == "ModuleNotFoundError: No module named 'common'", last
