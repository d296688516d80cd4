"""Lazy construction of the core strategies, so importing ``ray_plugins`` never imports torch."""

from __future__ import annotations

import importlib
import inspect
from typing import Any


def make_strategy(module: str, cls_name: str, options: dict[str, Any], n_startup_trials: int):
    """``module.cls_name(**options)``, passing ``n_init=n_startup_trials`` if it takes one.

    An absent module or class raises an ImportError that says so (the searcher is constructed,
    not silently degraded to random search).
    """
    try:
        cls = getattr(importlib.import_module(module), cls_name)
    except (ImportError, AttributeError) as err:
        raise ImportError(
            f"{module}.{cls_name} is not available in this installation of mixbo ({err})."
        ) from err
    options = dict(options)
    params = inspect.signature(cls).parameters
    if "n_init" in params and "n_init" not in options:
        options["n_init"] = n_startup_trials
    return cls(**options)
