"""mixbo's Optuna samplers: swap one line,
``optuna.create_study(sampler=CoCaBOSampler(seed=0))``."""

import common as _common

if not getattr(_common, "__mixbo__", False):  # another top-level module named `common` shadows ours
    raise ImportError(
        f"optuna_plugins needs mixbo's `common` package, but `import common` found "
        f"{getattr(_common, '__file__', None) or _common!r}. Rename that module or put mixbo first "
        "on sys.path (reinstall with `pip install mixbo`)."
    )

from optuna_plugins.bofm import BOFMSampler  # noqa: E402
from optuna_plugins.casmopolitan import CasmopolitanSampler  # noqa: E402
from optuna_plugins.cocabo import CoCaBOSampler  # noqa: E402
from optuna_plugins.mixbo import MixboSampler  # noqa: E402

__all__ = ["BOFMSampler", "CasmopolitanSampler", "CoCaBOSampler", "MixboSampler"]
