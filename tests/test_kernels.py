import numpy as np
import pytest
import torch

from common.models.kernels.matern import matern_kernel
from common.models.kernels.mixture import MixtureKernel, cocabo_kernel
from common.models.kernels.overlap import OverlapKernel


def mixed_inputs(n: int, seed: int) -> torch.Tensor:
    g = np.random.default_rng(seed)
    x = np.hstack([g.random((n, 2)), g.integers(0, 3, (n, 3))])
    return torch.as_tensor(x, dtype=torch.float64)


def test_overlap_kernel_is_fraction_of_matching_categories() -> None:
    k = OverlapKernel()
    a = torch.tensor([[0.0, 1.0, 2.0]], dtype=torch.float64)
    b = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], dtype=torch.float64)
    np.testing.assert_allclose(k(a, b).to_dense().numpy(), [[2 / 3, 0.0]])
    np.testing.assert_allclose(k(b, b, diag=True).numpy(), [1.0, 1.0])


@pytest.mark.parametrize("seed", range(5))
def test_cocabo_kernel_gram_is_positive_definite(seed: int) -> None:
    X = mixed_inputs(40, seed)
    kernel = cocabo_kernel([0, 1], [2, 3, 4]).to(torch.float64)
    with torch.no_grad():
        kernel.base_kernel.mix = float(np.random.default_rng(seed).random())
        K = kernel(X).to_dense()
    assert torch.allclose(K, K.T)
    assert torch.linalg.eigvalsh(K).min() > -1e-9


def test_mixture_endpoints_are_sum_and_product() -> None:
    X = mixed_inputs(15, 0)
    k_h = OverlapKernel(active_dims=[2, 3, 4])
    k_x = matern_kernel([0, 1]).to(torch.float64)
    mixture = MixtureKernel(k_h, k_x).to(torch.float64)
    with torch.no_grad():
        kh, kx = k_h(X).to_dense(), k_x(X).to_dense()
        mixture.mix = 0.0
        torch.testing.assert_close(mixture(X).to_dense(), kh + kx)
        mixture.mix = 1.0
        torch.testing.assert_close(mixture(X).to_dense(), kh * kx)
        mixture.mix = 0.3
        torch.testing.assert_close(mixture(X).to_dense(), 0.7 * (kh + kx) + 0.3 * kh * kx)


def test_cocabo_kernel_reduces_to_the_kind_present() -> None:
    assert isinstance(cocabo_kernel([], [0, 1]).base_kernel, OverlapKernel)
    assert not isinstance(cocabo_kernel([0], []).base_kernel, (OverlapKernel, MixtureKernel))


def test_every_kernel_has_its_fast_forms_or_declares_the_slow_path() -> None:
    """A kernel class defined in ``common.models.kernels`` (and gpytorch's kernels the methods
    build) is registered with :mod:`common.models.kernels.fast_forms`: a new kernel without its
    MAP term and cross-covariance part would otherwise be fitted through autograd unnoticed."""
    import importlib
    import inspect
    import pkgutil

    from gpytorch.kernels import Kernel, MaternKernel, ScaleKernel

    import common.models.kernels as kernels
    from common.models.kernels.fast_forms import forms_for

    classes = {MaternKernel, ScaleKernel}
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"{kernels.__name__}.{info.name}")
        classes |= {
            cls
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, Kernel) and cls.__module__ == module.__name__
        }
    assert len(classes) >= 6
    missing = sorted(cls.__name__ for cls in classes if forms_for(cls) is None)
    assert not missing, f"kernels without fast forms or a declared slow path: {missing}"
    slow = sorted(cls.__name__ for cls in classes if forms_for(cls).map_term is None)
    assert not slow  # today every kernel has both forms
    assert all(forms_for(cls).cross_part is not None for cls in classes)
