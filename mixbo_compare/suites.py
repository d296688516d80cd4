"""The generalisation suite: problems drawn by a seeded generator, split into a *tuning* part and a
*validation* part, so that a change is decided on one set of problems and judged on another.

Why: every earlier decision was kept or rejected on the same 13 public problems, which were then
also the evidence; on problems no one had tuned for, ``MixboSampler`` led far less often. The
suite is therefore generated, not chosen: :data:`SEED` draws each family's members (which
bbob-mixint instance and dimension, which relabelling, which scikit-learn model and data set, …)
and the split between the parts. The same seed gives the same suite.

Families (``family`` of each :class:`Member`):

- ``bbob-mixint``: every one of COCO's 24 functions, each at a drawn instance (2 to 15: COCO
  has 15; instance 1 is the public pages') and dimension;
- ``relabelled`` / ``re-instanced``: the synthetic problems with their categories permuted
  (``NAME~K``), Pest Control and Contamination at other seeds (``NAME@N``);
- ``tabular-encoding``: HPOLib tables with their numeric columns written as users write them
  (categorical values, integer or float ranges: ``hpolib-DATA%ENC``);
- ``sklearn``: real scikit-learn models on its bundled data sets (``sk-MODEL-DATA``);
- ``binary``: weighted MAX-SAT instances and low-autocorrelation binary sequences;
- ``conditional``, ``constrained``, ``pruned`` (a learning-curve problem under a drawn pruner,
  ``NAME+PRUNER``) and ``multi-objective`` (bi-objective bbob-mixint functions).

Each family's members are shuffled and about a third go to the tuning part (none for a family of
one). ``mixbo-compare --suite NAME`` runs a part (``generalise-tuning``,
``generalise-validation``) or both (``generalise``) with the suite's defaults (:data:`DEFAULTS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

SEED = 66  # the issue that asked for the suite; change it only to draw a new suite
NAME = "generalise"
PARTS = ("tuning", "validation")
# what a suite run uses unless the command says otherwise
DEFAULTS = {"samplers": ("mixbo", "tpe", "gp", "catcmawm"), "seeds": 5, "trials": 100}
TUNING_SHARE = 1 / 3

_SYNTHETIC = ("func2c", "func3c", "ackley5c", "ackley53")
_HPOLIB = ("slice", "naval", "protein", "parkinsons")
_ENCODINGS = ("cat", "int", "float")
_SK_MODELS = ("svc", "rf", "hgb", "knn", "logreg")
_SK_DATA = ("iris", "wine", "breast_cancer", "digits")
_CURVES = ("lc-sgd-digits", "lc-powerlaw", "lc-mlp-breast-cancer", "lc-gbm-diabetes")


@dataclass(frozen=True)
class Member:
    """One problem of the suite: its ``mixbo-compare`` name, family and part."""

    name: str
    family: str
    part: str


def _draw(rng: np.random.Generator) -> list[tuple[str, str]]:
    """Every member's (name, family), in the order drawn."""
    drawn: list[tuple[str, str]] = []
    for f in range(1, 25):
        d = int(rng.choice([5, 10, 20], p=[0.4, 0.4, 0.2]))
        drawn.append((f"bbob-mixint-f{f}-d{d}@{int(rng.integers(2, 16))}", "bbob-mixint"))
    for name in _SYNTHETIC:
        drawn.append((f"{name}~{int(rng.integers(10, 1000))}", "relabelled"))
    for name in ("pest", "contamination"):
        drawn.append((f"{name}@{int(rng.integers(10, 10_000))}", "re-instanced"))
    for data in _HPOLIB:
        drawn.append((f"hpolib-{data}%{rng.choice(_ENCODINGS)}", "tabular-encoding"))
    pairs = [(m, d) for m in _SK_MODELS for d in _SK_DATA]
    for k in rng.choice(len(pairs), size=5, replace=False):
        drawn.append((f"sk-{pairs[k][0]}-{pairs[k][1]}", "sklearn"))
    for _ in range(2):
        v, instance = int(rng.integers(20, 61)), int(rng.integers(1, 1000))
        drawn.append((f"maxsat-v{v}@{instance}", "binary"))
    for n in rng.choice(np.arange(20, 41), size=2, replace=False):
        drawn.append((f"labs-n{int(n)}", "binary"))
    drawn += [("jenatton", "conditional"), ("sklearn-models", "conditional")]
    drawn += [("pressure-vessel", "constrained"), ("forest-size", "constrained")]
    for k in rng.choice(len(_CURVES), size=2, replace=False):
        drawn.append((f"{_CURVES[k]}+{rng.choice(['median', 'hyperband'])}", "pruned"))
    for _ in range(2):
        f, instance = int(rng.integers(1, 93)), int(rng.integers(2, 16))
        drawn.append((f"mo-bbob-biobj-mixint-f{f}-d5@{instance}", "multi-objective"))
    return drawn


@cache
def members(seed: int = SEED) -> tuple[Member, ...]:
    """The suite drawn from ``seed``: every member with its family and part."""
    rng = np.random.default_rng(seed)
    drawn = _draw(rng)
    families = list(dict.fromkeys(family for _, family in drawn))
    tuning: set[str] = set()
    for family in families:
        names = [name for name, f in drawn if f == family]
        if len(names) > 1:
            n = max(1, round(TUNING_SHARE * len(names)))
            tuning.update(str(x) for x in rng.choice(names, size=n, replace=False))
    return tuple(
        Member(name, family, "tuning" if name in tuning else "validation") for name, family in drawn
    )


def suite_names() -> list[str]:
    """The names ``--suite`` takes: the whole suite and each part."""
    return [NAME, *(f"{NAME}-{part}" for part in PARTS)]


def problems(suite: str) -> list[str]:
    """The problem names of ``suite`` (one of :func:`suite_names`), in drawing order."""
    if suite not in suite_names():
        raise ValueError(f"unknown suite {suite!r}; choose one of {', '.join(suite_names())}")
    part = suite.removeprefix(NAME).lstrip("-")
    return [m.name for m in members() if not part or m.part == part]


def member(name: str) -> Member | None:
    """The suite's member called ``name``, or None."""
    return next((m for m in members() if m.name == name), None)
