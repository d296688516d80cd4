"""A user's own Optuna objective as a problem of ``mixbo-compare``.

An objective is what a user already passes to ``study.optimize``: a function of an
``optuna.Trial`` that calls ``trial.suggest_*`` (conditional parameters allowed), may report
intermediate values for a pruner (``trial.report``/``trial.should_prune``), may set constraints
(``trial.set_constraint(name, value)``, feasible when ≤ 0) and returns one value, or one per
objective of ``directions``. Unlike the built-in problems it has no fixed space and no known
optimum, so it is compared by the best value found (and the hypervolume for several objectives).

It is named on the command line as ``PATH.py:FUNCTION`` or ``package.module:FUNCTION``
(:func:`load_objective`); a :class:`UserObjective` keeps that text, so that a worker process
loads the same function again instead of pickling a function defined in a file.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DIRECTIONS = ("minimize", "maximize")
Objective = Callable[[Any], Any]


class ObjectiveError(ValueError):
    """A user objective that cannot be loaded or does not fit the comparison; its message is
    one line that says what to do instead."""


def load_objective(spec: str) -> Objective:
    """The function ``spec`` names: ``PATH.py:FUNCTION`` (a file, imported as a module, its folder
    put on ``sys.path`` for its own imports) or ``package.module:FUNCTION`` (importable as it is).

    Raises :class:`ObjectiveError` with a one-line message for a missing file or module, a
    module that fails to import, a missing or non-callable function.
    """
    where, colon, name = spec.rpartition(":")
    if not colon or not where or not name:
        raise ObjectiveError(
            f"--objective {spec!r}: name a function as PATH.py:FUNCTION or package.module:FUNCTION"
        )
    module = _module_of_file(where) if where.endswith(".py") else _module_by_name(where)
    function = module
    for part in name.split("."):  # a function or a class's static method: module:Class.method
        if not hasattr(function, part):
            names = sorted(n for n, v in vars(module).items() if _is_function(n, v))
            have = f" (it has: {', '.join(names)})" if names else ""
            raise ObjectiveError(f"{where} has no function {name!r}{have}")
        function = getattr(function, part)
    if not callable(function):
        raise ObjectiveError(f"{spec}: {name!r} is a {type(function).__name__}, not a function")
    return function


def _is_function(name: str, value: Any) -> bool:
    return callable(value) and not name.startswith("_") and inspect.isfunction(value)


def _module_of_file(path: str) -> Any:
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise ObjectiveError(f"no file {path!r} (the objective's file, as PATH.py:FUNCTION)")
    # imported afresh each time: an objective edited in a notebook's session is the new one
    name = "mixbo_user_objective_" + hashlib.sha256(str(file).encode()).hexdigest()[:12]
    if str(file.parent) not in sys.path:
        sys.path.append(str(file.parent))  # after ours: a user's common.py shadows nothing
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ObjectiveError(f"{path!r} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ObjectiveError(f"importing {path} failed: {_one_line(exc)}") from exc
    return module


def _module_by_name(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise ObjectiveError(
                f"no module named {exc.name!r}: give a file as PATH.py:FUNCTION, or install the "
                "package or run from the folder that holds it"
            ) from exc
        raise ObjectiveError(f"importing {name} failed: {_one_line(exc)}") from exc
    except Exception as exc:
        raise ObjectiveError(f"importing {name} failed: {_one_line(exc)}") from exc


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def check_directions(directions: Sequence[str]) -> list[str]:
    """``directions`` as Optuna takes them, or :class:`ObjectiveError` naming the bad one."""
    out = [str(d).lower() for d in directions]
    bad = [d for d in out if d not in DIRECTIONS]
    if not out or bad:
        raise ObjectiveError(
            f"--directions takes one of {' or '.join(DIRECTIONS)} per objective, got "
            f"{' '.join(map(str, directions)) or 'none'}"
        )
    return out


@dataclass
class UserObjective:
    """A user's objective under the name it is reported by, with its ``directions`` (one per
    value it returns). ``spec`` is how it was named (``PATH.py:FUNCTION``); without one the
    function itself is kept (the Python API's ``compare``), which then runs in this process."""

    name: str
    directions: list[str]
    spec: str | None = None
    function: Objective | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.directions = check_directions(self.directions)
        if self.spec is None and self.function is None:
            raise ObjectiveError("a user objective needs a function or PATH.py:FUNCTION")

    @property
    def objective(self) -> Objective:
        """The function, loaded from ``spec`` on first use (in a worker process too)."""
        if self.function is None:
            assert self.spec is not None
            self.function = load_objective(self.spec)
        return self.function

    @property
    def n_objectives(self) -> int:
        return len(self.directions)

    def fingerprint(self) -> str:
        """A short hash of what decides this objective's runs: its source (the whole file or
        module where it can be read) and directions, so a changed objective is run again."""
        digest = hashlib.sha256(" ".join(self.directions).encode())
        function = self.objective
        try:
            digest.update(Path(inspect.getfile(function)).read_bytes())
        except (OSError, TypeError):
            try:
                digest.update(inspect.getsource(function).encode())
            except (OSError, TypeError):
                digest.update(getattr(function, "__qualname__", repr(function)).encode())
        digest.update(getattr(function, "__qualname__", "").encode())
        return digest.hexdigest()[:16]

    def __getstate__(self) -> dict[str, Any]:
        """A named objective travels by its name and is loaded again where it runs."""
        state = dict(vars(self))
        if self.spec is not None:
            state["function"] = None
        return state


def default_name(spec: str) -> str:
    """The name a comparison reports an objective ``spec`` by: its function's name."""
    return spec.rpartition(":")[2] or spec
