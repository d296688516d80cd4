"""The GP kernels, one module per kernel, each with its fast forms beside its definition.

A kernel module defines the gpytorch kernel (or builds gpytorch's own) and registers the
kernel's MAP term and cross-covariance part with :mod:`common.models.kernels.fast_forms`, so a
model built from it is fitted and evaluated in closed form; a kernel without them registers the
slow path instead. Importing this package imports every kernel module, so the registry is
complete wherever a kernel is used.
"""

from common.models.kernels import (  # noqa: F401  (each module registers its kernels' forms)
    frequency_modulated,
    matern,
    mixture,
    overlap,
    scale,
)
