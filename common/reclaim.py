"""Reclaiming the memory of discarded GP models by reference counting, without the collector.

gpytorch builds every model as reference cycles: each ``Module`` keeps a bound method of itself
as its state-dict hook (``_load_state_hook_ignore_shapes``), and a prior registered with a
module's own methods (the likelihood's noise, a scale kernel's output scale) keeps them in the
module's ``_priors``. A discarded model then waits, with its ``n × n`` matrices (the factor, the
prediction caches), for Python's full garbage collection, which Python schedules by object
counts, not bytes, and which, forced, costs a long study more with every object the process
holds (docs/decisions.md, "Discarded models freed by reference counting").

:func:`acyclic` rewires those references where a model is built: the hook gets its module
through torch's own weak reference (``_WrappedHook``'s ``with_module``), a prior's closure
through the module gpytorch passes to it. Nothing refers back to the model from inside, so its
last reference going frees it, matrices included, at once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


class _OwnMethod:
    """A module's own method as a prior's (setting) closure, without holding the module:
    gpytorch calls each closure with the module that registered the prior."""

    __slots__ = ("function",)

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def __call__(self, module: Any, *args: Any) -> Any:
        return self.function(module, module, *args)


def _own(method: Any, module: Any) -> Any:
    """``method`` as an :class:`_OwnMethod` where it is bound to ``module``, else unchanged."""
    if inspect.ismethod(method) and method.__self__ is module:
        return _OwnMethod(method.__func__)
    return method


def acyclic(model: Any) -> Any:
    """``model`` (a torch module) with the reference cycles gpytorch builds into each of its
    modules broken (see the module docstring); returns it. The hooks and priors behave as
    before: a state dict loads, a prior evaluates and samples, a deep copy copies them."""
    for module in model.modules():
        hooks = getattr(module, "_load_state_dict_pre_hooks", {})
        for key, wrapped in list(hooks.items()):
            hook = getattr(wrapped, "hook", None)
            bound_to_module = inspect.ismethod(hook) and hook.__self__ is module
            if bound_to_module and not getattr(wrapped, "with_module", True):
                try:  # torch's private wrapper: if its shape moves, the cycle stays (and
                    # tests/test_reclaim.py fails) rather than every suggestion falling back
                    hooks[key] = type(wrapped)(hook.__func__, module)  # the module, weakly
                except TypeError:
                    continue
        priors = getattr(module, "_priors", None) or {}
        for name, entry in list(priors.items()):
            if isinstance(entry, tuple) and len(entry) == 3:  # gpytorch's (prior, closure, setting)
                prior, closure, setting = entry
                priors[name] = (prior, _own(closure, module), _own(setting, module))
    return model
