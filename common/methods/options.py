"""What a method's options are: a frozen, validated object that builds the method's strategy.

Options import nothing heavy (numpy at most): an adapter checks the user's arguments when it is
constructed, and torch loads only when the engine asks the options for their strategy.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np

from common.batch.busy import BusyPolicy

if TYPE_CHECKING:
    from common.methods.strategy import Strategy


class MethodOptions(ABC):
    """A method's options: a frozen dataclass, validated when built, that makes the strategy.

    Subclasses (``CoCaBOOptions``, ``CasmopolitanOptions``, ``BOFMOptions``) live beside their
    method and import nothing heavy, so an adapter checks the user's options at construction
    while torch loads only with the first suggestion.
    """

    @abstractmethod
    def make(self, busy: BusyPolicy) -> Strategy:
        """The method's strategy with these options and busy-point policy."""


def check_integer(name: str, value: Any, minimum: int) -> None:
    """Raise a ``ValueError`` naming the option unless ``value`` is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")


def check_number(name: str, value: Any, minimum: float) -> None:
    """Raise a ``ValueError`` naming the option unless ``value`` is a finite number >= minimum."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not np.isfinite(float(value))
        or value < minimum
    ):
        raise ValueError(f"{name} must be a finite number >= {minimum}, got {value!r}.")


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}.")
