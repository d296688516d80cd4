"""GP models: building and MAP-fitting them (warm-started, with a refit policy), the target
warpings, the kernel choice, and the posterior at candidates; the kernels in ``kernels/``."""
