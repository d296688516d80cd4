"""mixbo's framework-free core: mixed spaces, GP models, acquisition and the methods' strategies.

Importing this package is cheap; torch, gpytorch and botorch load with the strategy modules.
"""

__mixbo__ = True

from common.space.history import History  # noqa: E402
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace  # noqa: E402

__all__ = ["Categorical", "Float", "History", "Integer", "MixedSpace"]
