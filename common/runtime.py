"""Where a suggestion's numerical work runs: on the CPU, with one torch thread."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def single_torch_thread() -> Iterator[None]:
    """One torch thread on the CPU for the numerical work; the caller's setting is restored.

    Keeps a suggestion from fighting the user's training (or other workers) for cores, and keeps
    it on the CPU even where the caller set a CUDA default device. The device context is entered
    only where the default device is not the CPU already: it intercepts every torch call (about a
    quarter of a suggestion's time at 100 trials).
    """
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with (
            torch.device("cpu")
            if torch.get_default_device().type != "cpu"
            else contextlib.nullcontext()
        ):
            yield
    finally:
        torch.set_num_threads(previous)
