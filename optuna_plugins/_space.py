"""Optuna distributions to a :class:`common.MixedSpace`."""

from __future__ import annotations

from collections.abc import Mapping

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from common.space.mixed_space import Categorical, Float, Integer, MixedSpace, Parameter


def to_parameter(name: str, dist: BaseDistribution) -> Parameter:
    if isinstance(dist, FloatDistribution):
        return Float(name, dist.low, dist.high, log=dist.log, step=dist.step)
    if isinstance(dist, IntDistribution):
        return Integer(name, dist.low, dist.high, log=dist.log, step=dist.step)
    if isinstance(dist, CategoricalDistribution):
        return Categorical(name, dist.choices)
    raise ValueError(
        f"Parameter {name!r} has an unsupported distribution {type(dist).__name__}; mixbo samplers "
        "support FloatDistribution, IntDistribution and CategoricalDistribution (suggest_float, "
        "suggest_int, suggest_categorical)."
    )


def to_mixed_space(search_space: Mapping[str, BaseDistribution]) -> MixedSpace:
    """The parameters of ``search_space`` in sorted name order (reproducible across processes)."""
    return MixedSpace([to_parameter(name, search_space[name]) for name in sorted(search_space)])
