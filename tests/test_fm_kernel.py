"""BO-FM's ModLap kernel: positive definiteness, the FM principle, closed forms, graphs, layout."""

import math

import numpy as np
import pytest
import torch

from common.models.kernels.frequency_modulated import FMKernel, FMLayout, Graph
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace

MIXED = MixedSpace(
    [
        Categorical("opt", ("adam", "sgd", "rmsprop", None)),
        Float("lr", 1e-4, 1e-1, log=True),
        Integer("depth", 1, 8),  # path graph
        Integer("width", 16, 512),  # too many values: continuous
        Categorical("flag", (True, False)),
        Integer("heads", 1, 12, log=True),  # log integer, path graph
        Float("mom", 0.0, 1.0),
    ]
)


def _kernel(layout, rng, alpha=None, beta=None, ls=None):
    k = FMKernel(layout).double()
    n_graphs, n_cont = len(layout.graphs), len(layout.cont_cols)
    k.beta = torch.as_tensor(beta if beta is not None else rng.uniform(0.01, 5.0, n_graphs))
    if n_cont:
        k.alpha = torch.as_tensor(alpha if alpha is not None else rng.uniform(0.01, 5.0, n_graphs))
        k.ls = torch.as_tensor(ls if ls is not None else rng.uniform(0.05, 1.0, n_cont))
    return k


def _dense(k, A, B=None):
    A = torch.as_tensor(A, dtype=torch.float64)
    B = A if B is None else torch.as_tensor(B, dtype=torch.float64)
    with torch.no_grad():
        return k(A, B).to_dense().numpy()


# ------------------------------------------------------------------------------ layout
def test_layout_maps_columns_to_graphs_and_back():
    layout = FMLayout.from_space(MIXED)
    names = [p.name for p in MIXED.modelled]
    assert [names[j] for j in layout.graph_cols] == ["opt", "depth", "flag", "heads"]
    assert [names[j] for j in layout.cont_cols] == ["lr", "width", "mom"]
    assert [g.kind for g in layout.graphs] == ["complete", "spectral", "complete", "spectral"]

    rng = np.random.default_rng(0)
    X = MIXED.sample(200, rng)
    Z = layout.to_model(X)
    configs = MIXED.decode(X)
    assert np.array_equal(Z[:, 2], [c["depth"] - 1 for c in configs])
    assert np.array_equal(Z[:, 5], [c["heads"] - 1 for c in configs])  # log ints: value order
    assert np.allclose(layout.to_space(Z), MIXED.round(X))
    assert MIXED.decode(layout.to_space(Z)) == configs


def test_integer_threshold_and_user_graphs():
    space = MixedSpace([Integer("a", 0, 19), Integer("b", 0, 20), Categorical("c", "xyz")])
    layout = FMLayout.from_space(space)
    assert layout.graph_cols == (0, 2) and layout.cont_cols == (1,)  # 20 values: path; 21: not
    assert FMLayout.from_space(space, max_path_values=21).graph_cols == (0, 1, 2)
    path3 = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    custom = FMLayout.from_space(space, graphs={"c": path3, "b": np.ones((21, 21))})
    assert custom.graph_cols == (0, 1, 2) and custom.graphs[2].kind == "spectral"
    with pytest.raises(ValueError):
        FMLayout.from_space(space, graphs={"c": np.ones((4, 4))})  # wrong size
    with pytest.raises(ValueError):
        Graph.from_adjacency([[0, 1, 0], [0, 0, 1], [0, 1, 0]])  # not symmetric
    with pytest.raises(ValueError):
        FMLayout.from_space(space, graphs={"nope": path3})


def test_path_graph_spectrum_is_cached_and_matches_dct():
    g = Graph.path(7)
    assert Graph.path(7) is g  # eigendecomposed once
    k = np.arange(7)
    assert np.allclose(g.eigenvalues, 2 - 2 * np.cos(np.pi * k / 7))
    assert np.allclose(g.projectors.sum(0), np.eye(7))


# ------------------------------------------------------------------------------ kernel properties
@pytest.mark.parametrize("seed", range(4))
def test_gram_matrix_is_positive_definite(seed):
    rng = np.random.default_rng(seed)
    layout = FMLayout.from_space(MIXED)
    Z = layout.to_model(MIXED.sample(120, rng))
    K = _dense(_kernel(layout, rng), Z)
    assert np.allclose(K, K.T)
    eig = np.linalg.eigvalsh(K)
    assert eig.min() > 1e-10 * eig.max()
    diag = _kernel(layout, np.random.default_rng(seed))
    with torch.no_grad():
        d = diag(torch.as_tensor(Z), diag=True).numpy()
    assert np.allclose(d, np.diag(_dense(diag, Z)))


def _modlap_and_moddif_on_complete_graph(n, alpha, beta, dist2):
    """Reference values on K_n for (same, different) categories, ModLap and ModDif (seed 004)."""
    t = 1.0 + alpha * dist2
    lap = ((1 / t + (n - 1) / (t + beta * n)) / n, (1 / t - 1 / (t + beta * n)) / n)
    dif = ((1 + (n - 1) * np.exp(-t * beta * n)) / n, (1 - np.exp(-t * beta * n)) / n)
    return lap, dif


def _never_increases(values, tol=1e-12):
    return bool(np.all(np.diff(values) <= tol))


def test_fm_principle_is_testable():
    # The monotonicity check below can fail: ModDif violates the FM principle off the diagonal.
    dist2 = np.linspace(0.0, 10.0, 50)
    lap, dif = _modlap_and_moddif_on_complete_graph(4, 0.3, 0.7, dist2)
    assert _never_increases(lap[1]) and not _never_increases(dif[1])


@pytest.mark.parametrize("seed", range(3))
def test_kernel_never_increases_with_continuous_distance(seed):
    rng = np.random.default_rng(seed)
    path3 = np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]])  # a weighted user graph too
    space = MixedSpace([*MIXED.params, Categorical("tri", "abc")])
    layout = FMLayout.from_space(space, graphs={"tri": path3})
    k = _kernel(layout, rng)
    cont = list(layout.cont_cols)
    a = layout.to_model(space.sample(30, rng))
    b = layout.to_model(space.sample(30, rng))  # 30 pairs of discrete values (v, v')
    steps = np.linspace(0.0, 1.0, 40)
    for i in range(30):
        direction = rng.normal(size=len(cont))
        rows = np.repeat(b[i][None], len(steps), axis=0)
        rows[:, cont] = a[i][cont] + steps[:, None] * direction  # growing ‖c − c'‖
        values = _dense(k, a[i][None], rows)[0]
        assert np.all(values >= -1e-12)
        assert _never_increases(values), values


def test_complete_graph_closed_form_equals_eigendecomposition():
    rng = np.random.default_rng(1)
    for n in (2, 3, 7, 17):
        space = MixedSpace([Categorical("h", tuple(range(n))), Float("x", 0, 1), Float("y", 0, 1)])
        closed = FMLayout.from_space(space)
        eigen = FMLayout.from_space(space, graphs={"h": np.ones((n, n))})
        assert closed.graphs[0].kind == "complete" and eigen.graphs[0].kind == "spectral"
        alpha, beta, ls = rng.uniform(0.1, 3.0), rng.uniform(0.01, 3.0), rng.uniform(0.1, 1, 2)
        Z = closed.to_model(space.sample(40, rng))
        K_closed = _dense(_kernel(closed, rng, [alpha], [beta], ls), Z)
        K_eigen = _dense(_kernel(eigen, rng, [alpha], [beta], ls), Z)
        # The same values from a fresh numpy eigendecomposition of the Laplacian of K_n.
        A = closed.graphs[0].adjacency
        lam, U = np.linalg.eigh(np.diag(A.sum(1)) - A)
        d2 = (((Z[:, None, 1:] - Z[None, :, 1:]) / ls) ** 2).sum(-1) / 2
        t = 1.0 + alpha * d2
        B = U[Z[:, 0].astype(int)]  # rows of U at each point's category
        expected = np.einsum("ik,ijk,jk->ij", B, 1.0 / (t[..., None] + beta * lam), B)
        norm = np.mean(1.0 / (1.0 + beta * lam))
        assert np.allclose(K_closed, expected / norm, atol=1e-12)
        assert np.allclose(K_closed, K_eigen, atol=1e-12)


def test_path_graph_orders_integer_values():
    space = MixedSpace([Integer("k", 0, 9), Float("x", 0.0, 1.0)])
    layout = FMLayout.from_space(space)
    k = _kernel(layout, np.random.default_rng(0), alpha=[1.0], beta=[0.8], ls=[0.3])
    Z = layout.to_model(space.encode([{"k": v, "x": 0.5} for v in range(10)]))
    K = _dense(k, Z)
    for v in range(10):  # nearer integer values are more similar, in both directions
        assert np.all(np.diff(K[v, v:]) < 0)
        assert np.all(np.diff(K[v, : v + 1]) > 0)
    # A categorical with the same values has no order: all other values equally similar.
    cat = MixedSpace([Categorical("k", tuple(range(10))), Float("x", 0.0, 1.0)])
    cat_layout = FMLayout.from_space(cat)
    kc = _kernel(cat_layout, np.random.default_rng(0), alpha=[1.0], beta=[0.8], ls=[0.3])
    Kc = _dense(kc, cat_layout.to_model(cat.encode([{"k": v, "x": 0.5} for v in range(10)])))
    assert np.allclose(Kc[0, 1:], Kc[0, 1])


def test_user_graph_changes_similarity():
    space = MixedSpace([Categorical("c", ("a", "b", "c")), Float("x", 0.0, 1.0)])
    path = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    Z = np.array([[0, 0.5], [1, 0.5], [2, 0.5]])
    K_default = _dense(_kernel(FMLayout.from_space(space), None, [1.0], [1.0], [0.5]), Z)
    layout = FMLayout.from_space(space, graphs={"c": path})
    K_path = _dense(_kernel(layout, None, [1.0], [1.0], [0.5]), Z)
    assert math.isclose(K_default[0, 1], K_default[0, 2])
    assert K_path[0, 1] > K_path[0, 2]


def test_batched_inputs_and_discrete_only_spaces():
    rng = np.random.default_rng(3)
    layout = FMLayout.from_space(MIXED)
    k = _kernel(layout, rng)
    Z = torch.as_tensor(layout.to_model(MIXED.sample(12, rng)))
    with torch.no_grad():
        batched = k(Z[:5, None, :], Z.expand(5, -1, -1)).to_dense()
    assert batched.shape == (5, 1, 12)
    assert torch.allclose(batched[:, 0, :], torch.as_tensor(_dense(k, Z))[:5])

    discrete = MixedSpace([Categorical("a", "xyz"), Integer("b", 0, 4)])
    dl = FMLayout.from_space(discrete)
    kd = _kernel(dl, rng)
    assert not hasattr(kd, "raw_alpha")  # no continuous columns: nothing to modulate
    every = [{"a": a, "b": b} for a in "xyz" for b in range(5)]
    K = _dense(kd, dl.to_model(discrete.encode(every)))
    assert np.linalg.eigvalsh(K).min() > 0


def test_expanded_training_inputs_give_the_materialised_covariance():
    """Training rows expanded to every candidate's batch (stride 0, as gpytorch's own prediction
    path passes them) give what the materialised copy gives."""
    space = MixedSpace([Categorical("a", list("abcde")), Integer("n", 0, 9), Float("x", 0.0, 1.0)])
    layout = FMLayout.from_space(space)
    kernel = FMKernel(layout).double()
    kernel.beta = torch.tensor([0.7, 1.3])
    rng = np.random.default_rng(0)
    train = torch.as_tensor(layout.to_model(space.sample(30, rng)))
    cand = torch.as_tensor(layout.to_model(space.sample(8, rng)))[:, None, :]
    expanded = train.expand(8, *train.shape)
    assert expanded.stride(0) == 0
    with torch.no_grad():
        fast = kernel.forward(cand, expanded)
        slow = kernel.forward(cand, expanded.contiguous())
    assert fast.shape == (8, 1, 30)
    assert torch.allclose(fast, slow, rtol=0, atol=1e-15)


def test_discrete_only_kernel_is_the_product_of_graph_factors_with_its_gradients():
    """Without continuous columns the kernel is computed as one matrix product of log-tables;
    it must equal Π_p [U_p (I + β_p Λ_p)⁻¹ U_pᵀ / mean diag]_{v_p v'_p} from the Laplacians,
    on full, diagonal and batched inputs, and give the same gradients in β."""
    path = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]])
    space = MixedSpace(
        [
            Categorical("a", list("abcde")),  # complete graph, closed form
            Integer("k", 0, 6),  # path graph, eigendecomposition
            Categorical("u", list("wxyz")),  # a user's path graph
            Categorical("flag", (True, False)),
        ]
    )
    layout = FMLayout.from_space(space, graphs={"u": path})
    kernel = FMKernel(layout).double()
    rng = np.random.default_rng(4)
    beta = torch.tensor(rng.uniform(0.05, 4.0, len(layout.graphs)), requires_grad=True)
    kernel.beta = beta.detach()
    Z = torch.as_tensor(layout.to_model(space.sample(30, rng)))

    def reference(b: torch.Tensor, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        K = torch.ones(A.shape[0], B.shape[0], dtype=torch.float64)
        for p, (col, g) in enumerate(zip(layout.graph_cols, layout.graphs, strict=True)):
            adjacency = torch.as_tensor(g.adjacency, dtype=torch.float64)
            lam, U = torch.linalg.eigh(torch.diag(adjacency.sum(1)) - adjacency)
            g_lam = 1.0 / (1.0 + b[p] * lam)
            table = (U * g_lam) @ U.T / g_lam.mean()
            K = K * table[A[:, col].long()][:, B[:, col].long()]
        return K

    K = kernel.forward(Z, Z)
    assert torch.allclose(K, reference(beta.detach(), Z, Z), rtol=1e-10, atol=1e-14)
    assert torch.allclose(kernel.forward(Z, Z, diag=True), torch.diagonal(K), rtol=1e-12)
    cand = Z[:7, None, :]
    batched = kernel.forward(cand, Z.expand(7, *Z.shape))
    assert batched.shape == (7, 1, 30)
    assert torch.allclose(batched[:, 0], K[:7], rtol=1e-12)

    kernel.zero_grad()
    kernel.forward(Z, Z[:11]).sum().backward()
    grad = kernel.raw_beta.grad * torch.autograd.grad(kernel.beta.sum(), kernel.raw_beta)[0] ** -1
    (expected,) = torch.autograd.grad(reference(beta, Z, Z[:11]).sum(), beta)
    assert torch.allclose(grad, expected, rtol=1e-8)
