"""Ray Tune search spaces to a :class:`common.MixedSpace`, and mixbo configurations back to Tune's.

Each Tune domain becomes one :class:`Dimension`: the core parameter the strategies model, named by
the domain's flattened path (``"model/lr"``), plus the map between core values and Tune values.

- ``uniform`` / ``loguniform``: ``Float(low, high[, log])``.
- ``quniform``: ``Float`` stepped by ``q`` over the multiples of ``q`` inside the bounds.
- ``randint`` / ``lograndint``: ``Integer(low, upper - 1[, log])`` (Tune's upper is exclusive).
- ``qrandint``: ``Integer`` stepped by ``q`` over the multiples of ``q`` (upper bound inclusive, but
  exclusive for ``q == 1``, exactly as Tune samples it).
- ``qloguniform`` / ``qlograndint``: ``Integer(log)`` over the grid index ``k``, Tune value
  ``k * q`` (Tune draws the grid index log-uniformly, and ``log(k q) = log k + log q``).
- ``choice``: ``Categorical`` over the indices ``0..n-1``; the categories themselves (lists, dicts,
  anything) stay here and are never hashed.
- ``choice`` whose categories hold domains (Tune's conditional space, e.g. ``tune.choice([{"kind":
  "svm", "C": tune.loguniform(...)}, {"kind": "tree", "depth": tune.randint(...)}])``): the choice
  is the branch's parent, and each category's domains are its children, named with the branch
  index (``"model/0/C"``), declared active only when the parent takes that index
  (:class:`common.space.conditions.Condition`; nesting works). A trial receives the chosen category
  with its domains sampled, and only the chosen branch's parameters are recorded and modelled.

Constants pass through unchanged, nested dicts (and lists) keep their shape. ``grid_search``,
``sample_from`` and unbounded normals (``randn``) cannot be modelled and raise a ``ValueError`` that
names the parameter. Importing this module needs only ray and numpy.
"""

from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from ray.tune.search.sample import Categorical as TuneCategorical
from ray.tune.search.sample import Domain, Function, LogUniform, Normal, Quantized, Uniform
from ray.tune.search.sample import Float as TuneFloat
from ray.tune.search.sample import Integer as TuneInteger
from ray.tune.search.variant_generator import parse_spec_vars

from common.space.conditions import Condition
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace, Parameter

_SEP = "/"


@dataclass(frozen=True)
class Dimension:
    """One Tune domain as the core models it.

    ``kind`` is ``"value"`` (the core value is the Tune value), ``"grid_index"`` (the core models
    the index ``k`` of the grid of ``q``; Tune value ``k * q``) or ``"choice"`` (the core models
    the index into ``categories``). ``integer`` says whether Tune values are ints; ``q`` is the
    grid of a quantised domain.
    """

    path: tuple[Any, ...]
    param: Parameter
    kind: str = "value"
    integer: bool = False
    q: float | int | None = None
    categories: tuple[Any, ...] | None = None
    branch: tuple[tuple[str, int], ...] = ()  # (choice, index) pairs this dimension needs

    @property
    def conditional(self) -> bool:
        """Whether this is a choice whose categories hold domains (a branch parent)."""
        return self.kind == "choice" and any(_holds_domain(c) for c in self.categories or ())

    def active_in(self, core: Mapping[str, Any]) -> bool:
        """Whether a core configuration takes every branch this dimension belongs to."""
        return all(core.get(parent) == index for parent, index in self.branch)

    @property
    def name(self) -> str:
        return self.param.name

    def to_tune(self, value: Any) -> Any:
        """The core's value to the value the trainable receives."""
        if self.kind == "choice":
            return copy.deepcopy(self.categories[int(value)])  # type: ignore[index]
        if self.kind == "grid_index":
            value = int(round(value)) * self.q  # type: ignore[operator]
        elif self.q is not None and not self.integer:
            value = round(value / self.q) * self.q  # the representation Tune's own sampler uses
        return int(round(value)) if self.integer else float(value)

    def to_core(self, value: Any) -> Any:
        """A Tune value (from a user's point or result) to the core's value, validated."""
        if self.kind == "choice":
            categories = self.categories or ()
            if self.conditional:
                constant = [i for i, c in enumerate(categories) if not _holds_domain(c)]
                sampled = [i for i, c in enumerate(categories) if _holds_domain(c)]
                for i in constant + sampled:  # a constant category is matched exactly first
                    if _matches(categories[i], value):
                        return i
                raise ValueError(f"{self.name}: {value!r} matches none of its categories.")
            return Categorical(self.name, self.categories or ()).index(value)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"{self.name}: {value!r} is not a number.")
        x = float(value)
        if not math.isfinite(x):
            raise ValueError(f"{self.name}: {value!r} is not finite.")
        if self.integer and not x.is_integer():
            raise ValueError(f"{self.name}: {value!r} is not an integer.")
        if self.q is not None:
            k = x / self.q
            if not math.isclose(k, round(k), rel_tol=1e-9, abs_tol=1e-9):
                raise ValueError(f"{self.name}: {value!r} is not a multiple of q={self.q}.")
            if self.kind == "grid_index":
                x = float(round(k))
        low, high = float(self.param.low), float(self.param.high)  # type: ignore[union-attr]
        tol = 1e-9 * max(1.0, abs(low), abs(high))
        if not low - tol <= x <= high + tol:
            raise ValueError(
                f"{self.name}: {value!r} is outside [{self.to_tune(low)}, {self.to_tune(high)}]."
            )
        x = min(max(x, low), high)
        return int(x) if isinstance(self.param, Integer) else x


class _Slot:
    """Where a modelled value goes in the configuration template."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __getstate__(self) -> str:
        return self.name

    def __setstate__(self, state: str) -> None:
        self.name = state


class TuneSpace:
    """A converted Tune search space: the :class:`MixedSpace` the strategies see, and the way back.

    ``to_config`` turns a core configuration into the (nested) configuration a trial receives, with
    the constants of the original space in place; ``to_core`` does the reverse for user-given
    points, accepting nested dicts or flattened ``"a/b"`` keys.
    """

    def __init__(self, dimensions: tuple[Dimension, ...], template: Any):
        self.dimensions = tuple(dimensions)
        flat = MixedSpace([d.param for d in self.dimensions])
        self.mixed = flat.with_conditions(_conditions(self.dimensions, flat))
        self._template = template

    def __len__(self) -> int:
        return len(self.dimensions)

    def __repr__(self) -> str:
        return f"TuneSpace({list(self.dimensions)!r})"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dimensions)

    def to_config(self, core: Mapping[str, Any]) -> dict[str, Any]:
        values = {
            d.name: d.to_tune(core[d.name])
            for d in self.dimensions
            if d.active_in(core) and not d.conditional  # a branch parent fills its branch
        }
        return _fill(self._template, values, core)

    def active(self, core: Mapping[str, Any]) -> dict[str, Any]:
        """``core`` without the parameters of branches it does not take."""
        return {d.name: core[d.name] for d in self.dimensions if d.active_in(core)}

    def to_core(self, config: Mapping[str, Any], *, partial: bool = False) -> dict[str, Any]:
        """The core configuration of a Tune one (the parameters of the branches it takes); a
        missing parameter raises unless ``partial``."""
        out: dict[str, Any] = {}
        for d in self.dimensions:  # a branch's parent comes before its children
            if not d.active_in(out):
                continue
            found, value = _lookup(config, d)
            if not found:
                if partial:
                    continue
                raise ValueError(f"{d.name}: no value given for this parameter in {config!r}.")
            out[d.name] = d.to_core(value)
        return out

    def sample(self, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
        """``n`` uniformly random core configurations."""
        return self.mixed.decode(self.mixed.sample(n, rng))


def _holds_domain(value: Any) -> bool:
    if isinstance(value, Domain):
        return True
    if isinstance(value, Mapping):
        return any(_holds_domain(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_domain(v) for v in value)
    return False


def convert_search_space(spec: Mapping[str, Any] | TuneSpace) -> TuneSpace:
    """A Tune ``param_space`` (nested dicts of domains and constants) to a :class:`TuneSpace`."""
    if isinstance(spec, TuneSpace):
        return spec
    if not isinstance(spec, Mapping):
        raise TypeError(f"a search space must be a dict, got {type(spec).__name__}.")
    spec = dict(spec)
    _, domain_vars, grid_vars = parse_spec_vars(spec)
    if grid_vars:
        names = ", ".join(repr(_name(path)) for path, _ in grid_vars)
        raise ValueError(
            f"Grid search parameters cannot be automatically converted to a mixbo search space: "
            f"{names}. Use tune.choice(...) for a categorical parameter instead."
        )
    dims: list[Dimension] = []
    template = _convert(spec, domain_vars, (), (), (), dims)
    return TuneSpace(tuple(dims), template)


def _convert(
    spec: Any,
    domain_vars: list[tuple[tuple, Domain]],
    path: tuple,
    name_path: tuple,
    branch: tuple[tuple[str, int], ...],
    dims: list[Dimension],
) -> Any:
    """Append the dimensions of ``spec``'s domains to ``dims`` (a choice's branches after it) and
    return ``spec``'s template. ``path`` is where ``spec`` sits in a trial's configuration,
    ``name_path`` the same with the branch indices that name its parameters."""
    slots: dict[tuple, Any] = {}
    for sub, domain in domain_vars:
        for key in sub:
            if isinstance(key, str) and _SEP in key:
                raise ValueError(
                    f"Parameter {_name(name_path + sub)!r}: the key {key!r} contains {_SEP!r}, "
                    "which mixbo uses to flatten nested spaces. Rename it."
                )
        dim = replace(_dimension(name_path + sub, domain), path=path + sub, branch=branch)
        dims.append(dim)
        if dim.conditional:
            slots[sub] = _Branches(
                dim.name,
                tuple(
                    _convert_branch(
                        c, path + sub, name_path + sub + (i,), (*branch, (dim.name, i)), dims
                    )
                    for i, c in enumerate(dim.categories or ())
                ),
            )
        else:
            slots[sub] = _Slot(dim.name)
    return _skeleton(spec, (), slots)


def _convert_branch(category, path, name_path, branch, dims) -> Any:
    """The template of one category of a conditional choice, its domains appended to ``dims``."""
    if not _holds_domain(category):
        return _Constant(category)
    wrapped = {"_": category}  # Tune parses the domains of a dict; a category may be a bare one
    _, domain_vars, grid_vars = parse_spec_vars(wrapped)
    if grid_vars:
        raise ValueError(
            f"Parameter {_name(name_path)!r}: grid_search inside a tune.choice cannot be modelled."
        )
    inner = [(sub[1:], domain) for sub, domain in domain_vars]
    return _convert(category, inner, path, name_path, branch, dims)


def _conditions(dimensions: tuple[Dimension, ...], space: MixedSpace) -> tuple[Condition, ...]:
    """Each branch's modelled parameters are active when its choice takes the branch's index
    (parents first, as :mod:`common.space.conditions` orders them; a choice of one category, not
    modelled, leaves its branch always active)."""
    modelled = {p.name for p in space.modelled}
    groups: dict[tuple[str, int], list[str]] = {}
    for d in dimensions:
        if d.branch and d.name in modelled and d.branch[-1][0] in modelled:
            groups.setdefault(d.branch[-1], []).append(d.name)
    return tuple(
        Condition(tuple(members), parent, (index,)) for (parent, index), members in groups.items()
    )


# ---------------------------------------------------------------------------------------- domains
def _name(path: tuple) -> str:
    return _SEP.join(str(k) for k in path)


def _dimension(path: tuple, domain: Domain) -> Dimension:
    name = _name(path)
    sampler = domain.get_sampler()
    q = None
    if isinstance(sampler, Quantized):
        q, sampler = sampler.q, sampler.get_sampler()
    if isinstance(domain, Function):
        raise ValueError(
            f"Parameter {name!r} is a tune.sample_from function, which a model cannot represent. "
            "Use a Tune domain (tune.uniform, tune.randint, tune.choice, ...) instead."
        )
    if isinstance(domain, TuneCategorical):
        if not isinstance(sampler, Uniform):
            raise ValueError(f"Parameter {name!r}: unsupported sampler {sampler} for a choice.")
        categories = tuple(domain.categories)
        param = Categorical(name, tuple(range(len(categories))))
        return Dimension(path, param, kind="choice", categories=categories)
    if isinstance(sampler, Normal) or not (
        isinstance(domain, (TuneFloat, TuneInteger))
        and np.isfinite(domain.lower)
        and np.isfinite(domain.upper)
    ):
        raise ValueError(
            f"Parameter {name!r} has an unbounded domain ({type(sampler).__name__} sampler, bounds "
            f"{domain.domain_str}); mixbo needs bounds. Use tune.uniform or tune.quniform instead "
            "of tune.randn / tune.qrandn."
        )
    if not isinstance(sampler, (Uniform, LogUniform)):
        raise ValueError(f"Parameter {name!r}: unsupported sampler {sampler}.")
    log = isinstance(sampler, LogUniform)
    if isinstance(domain, TuneFloat):
        return _float_dimension(path, name, domain.lower, domain.upper, log, q)
    return _integer_dimension(path, name, domain.lower, domain.upper, log, q)


def _grid_bounds(name: str, lower: float, upper: float, q: float) -> tuple[int, int]:
    """Indices of the first and last multiples of ``q`` inside ``[lower, upper]`` (as Tune's)."""

    def index(bound: float, rounding) -> int:
        scaled = bound / q
        nearest = round(scaled)
        return int(nearest if math.isclose(scaled, nearest) else rounding(scaled))

    lo, hi = index(lower, math.ceil), index(upper, math.floor)
    if hi < lo:
        raise ValueError(
            f"Parameter {name!r}: there is no multiple of q={q} between {lower} and {upper}."
        )
    return lo, hi


def _float_dimension(path, name, lower, upper, log, q) -> Dimension:
    if q is None:
        return Dimension(path, Float(name, float(lower), float(upper), log=log))
    if q <= 0:
        raise ValueError(f"Parameter {name!r}: q must be positive, got {q}.")
    lo, hi = _grid_bounds(name, lower, upper, q)
    if log:  # log-uniform over the grid index k; value k * q (log k = log value - log q)
        return Dimension(path, Integer(name, lo, hi, log=True), "grid_index", q=q)
    return Dimension(path, Float(name, float(lo * q), float(hi * q), step=q), q=q)


def _integer_dimension(path, name, lower, upper, log, q) -> Dimension:
    if q is None or q == 1:  # Tune's upper bound is exclusive here
        if upper - 1 < lower:
            raise ValueError(f"Parameter {name!r}: randint({lower}, {upper}) has no values.")
        param = Integer(name, int(lower), int(upper) - 1, log=log)
        return Dimension(path, param, integer=True, q=None if q is None else 1)
    if q != int(q) or q < 1:
        raise ValueError(f"Parameter {name!r}: an integer domain needs an integer q, got {q}.")
    q = int(q)
    lo, hi = _grid_bounds(name, lower, upper, q)
    if log:  # Tune samples the grid index log-uniformly
        param = Integer(name, lo, hi, log=True)
        return Dimension(path, param, "grid_index", integer=True, q=q)
    return Dimension(path, Integer(name, lo * q, hi * q, step=q), integer=True, q=q)


# ---------------------------------------------------------------------------------------- nesting
def _skeleton(node: Any, path: tuple, slots: Mapping[tuple, _Slot]) -> Any:
    """The space with every domain replaced by its slot; constants are kept as they are."""
    if path in slots:
        return slots[path]
    if isinstance(node, dict):
        return {k: _skeleton(v, path + (k,), slots) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        items = [_skeleton(v, path + (i,), slots) for i, v in enumerate(node)]
        return items if isinstance(node, list) else tuple(items)
    return node


@dataclass(frozen=True)
class _Branches:
    """A conditional choice in the template: the template of each of its categories."""

    name: str
    branches: tuple[Any, ...]


@dataclass(frozen=True)
class _Constant:
    """A category without domains, inside a conditional choice: given as a copy."""

    value: Any


def _fill(node: Any, values: Mapping[str, Any], core: Mapping[str, Any]) -> Any:
    """A fresh configuration from the template: containers rebuilt, slots filled, the branch
    ``core`` takes of each conditional choice."""
    if isinstance(node, _Slot):
        return values[node.name]
    if isinstance(node, _Branches):
        return _fill(node.branches[int(core[node.name])], values, core)
    if isinstance(node, _Constant):
        return copy.deepcopy(node.value)
    if isinstance(node, dict):
        return {k: _fill(v, values, core) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill(v, values, core) for v in node]
    if isinstance(node, tuple):
        return tuple(_fill(v, values, core) for v in node)
    return node


def _matches(category: Any, value: Any) -> bool:
    """Whether ``value`` could be ``category`` with its domains sampled (constants equal,
    containers of the same shape; a domain's value is checked by its own dimension)."""
    if isinstance(category, TuneCategorical):
        return any(_matches(c, value) for c in category.categories)
    if isinstance(category, Domain):  # a number, checked against its bounds by its dimension
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if isinstance(category, Mapping):
        return (
            isinstance(value, Mapping)
            and set(value) == set(category)
            and all(_matches(category[k], value[k]) for k in category)
        )
    if isinstance(category, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(category)
            and all(_matches(c, v) for c, v in zip(category, value, strict=True))
        )
    try:
        return bool(category == value)
    except Exception:  # an uncomparable pair (arrays, ...) is no match
        return False


def _lookup(config: Mapping[str, Any], dim: Dimension) -> tuple[bool, Any]:
    """The value for ``dim`` in a nested config, or under its flattened name."""
    node: Any = config
    for key in dim.path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            break
    else:
        return True, node
    if dim.name in config:
        return True, config[dim.name]
    return False, None
