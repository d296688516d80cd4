"""``mixbo-compare``: mixbo's samplers against Optuna's built-in ones on benchmark problems.

Needs the ``compare`` extra (``pip install 'mixbo[compare]'``: matplotlib, tqdm); the samplers do
not import this package. ``runner`` runs one study (``run``, the ``SAMPLERS`` registry),
``simulated_workers`` simulates asynchronous workers, ``report`` builds the table and plots, and
``cli`` is the command line.
"""

from optuna_plugins.compare.runner import (
    APPLIES,
    SAMPLERS,
    RunResult,
    SamplerFactory,
    distributions,
    is_ours,
    run,
    skip_reason,
)

__all__ = [
    "APPLIES",
    "SAMPLERS",
    "RunResult",
    "SamplerFactory",
    "distributions",
    "is_ours",
    "run",
    "skip_reason",
]
