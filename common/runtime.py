"""Where a suggestion's numerical work runs: on the CPU, with one thread."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cache


@cache
def _blas_controller():
    """threadpoolctl's view of the BLAS libraries of this process, found once (finding them
    costs about 1 ms, limiting known ones 0.01 ms). scipy's own OpenBLAS is loaded first: the
    methods' fits and optimisers use it, but until a strategy imports BoTorch nothing has."""
    import scipy.linalg  # noqa: F401
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """One torch thread and one BLAS thread on the CPU for the numerical work; the caller's
    settings are restored.

    Keeps a suggestion from fighting the user's training (or other workers) for cores, and keeps
    it on the CPU even where the caller set a CUDA default device. BLAS counts too: numpy's and
    scipy's OpenBLAS start one spinning thread per core, so two processes suggesting side by side
    on 2 cores took 2.5 times as long per suggestion as with one BLAS thread each (the default
    ``mixbo-compare`` run: 0.069 against 0.028 s for ``MixboSampler``). The device context is
    entered only where the default device is not the CPU already: it intercepts every torch call
    (about a quarter of a suggestion's time at 100 trials).
    """
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with (
            _blas_controller().limit(limits=1, user_api="blas"),
            torch.device("cpu")
            if torch.get_default_device().type != "cpu"
            else contextlib.nullcontext(),
        ):
            yield
    finally:
        torch.set_num_threads(previous)
