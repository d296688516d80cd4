"""``mixbo-compare``: mixbo's samplers against Optuna's built-in ones on benchmark problems.

``runner`` runs one study (``run``, the ``SAMPLERS`` registry), ``peers`` drives the optimisers a
user would pick instead (CatCMA with Margin, SMAC3, Ax: the ``peers`` extra), ``simulated_workers``
simulates asynchronous workers, ``report`` builds the table and the plots, ``cli`` is the command
line. The plots and the progress bar need the ``compare`` extra (``pip install 'mixbo[compare]'``:
matplotlib, tqdm), imported only where used; the samplers never import this package.
"""

from mixbo_compare.runner import (
    APPLIES,
    MIXBO_SAMPLERS,
    SAMPLERS,
    RunResult,
    SamplerFactory,
    distributions,
    is_ours,
    names,
    run,
    skip_reason,
)

__all__ = [
    "APPLIES",
    "MIXBO_SAMPLERS",
    "SAMPLERS",
    "RunResult",
    "SamplerFactory",
    "distributions",
    "is_ours",
    "names",
    "run",
    "skip_reason",
]

from mixbo_compare.api import ComparisonTable, compare  # noqa: E402  (after the registry)

__all__ += ["ComparisonTable", "compare"]
