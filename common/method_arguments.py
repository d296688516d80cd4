"""A method's constructor arguments in an adapter, generated from its options' fields.

Every Optuna sampler and Ray searcher of mixbo takes its framework's arguments (those of
``MixedBOSampler`` or ``MixedBOSearch``) and a few of its method's options. The per-method class
names which options it exposes, and :func:`method_init` writes its ``__init__``: an explicit
signature (what ``help()`` shows, with the options' defaults and types), the options object
built and checked first, and the base adapter's constructor called with it. So the options'
defaults live in one place and no adapter class restates its base's arguments.

>>> class CoCaBOSampler(MixedBOSampler):
...     __init__ = method_init(MixedBOSampler.__init__, CoCaBOOptions, ("kappa", "horizon"))
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable
from typing import Any

from common.engine import check_startup
from common.methods.options import MethodOptions


def method_init(
    base_init: Callable[..., None],
    options_class: type[MethodOptions],
    names: tuple[str, ...] = (),
    *,
    before: str = "pending",
) -> Callable[..., None]:
    """An adapter's ``__init__``: ``base_init``'s arguments but its first (the method's options),
    with the options' fields ``names`` inserted before the argument ``before``; the options get
    ``n_init`` from ``n_startup_trials`` where they have one."""
    base = inspect.signature(base_init, eval_str=True)
    params = [p for p in base.parameters.values() if p.name != "method"]
    fields = {f.name: f for f in dataclasses.fields(options_class)}
    types = typing.get_type_hints(options_class)
    extra = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=fields[name].default,
            annotation=types[name],
        )
        for name in names
    ]
    at = next(i for i, p in enumerate(params) if p.name == before)
    signature = base.replace(parameters=[*params[:at], *extra, *params[at:]])
    takes_n_init = "n_init" in fields

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        arguments = signature.bind(self, *args, **kwargs)
        arguments.apply_defaults()
        given = dict(arguments.arguments)
        del given["self"]
        options = {name: given.pop(name) for name in names}
        if takes_n_init:
            options["n_init"] = check_startup(given["n_startup_trials"])
        base_init(self, options_class(**options), **given)

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    return __init__
