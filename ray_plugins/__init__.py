"""mixbo's Ray Tune searchers: ``tune.TuneConfig(search_alg=CoCaBOSearch(seed=0), ...)``.

Importing this package needs ray (``pip install "mixbo[ray]"``) but not torch; the strategies and
their numerical stack load when a searcher is constructed.
"""

import common as _common

if not getattr(_common, "__mixbo__", False):  # another top-level module named `common` shadows ours
    raise ImportError(
        f"ray_plugins needs mixbo's `common` package, but `import common` found "
        f"{getattr(_common, '__file__', None) or _common!r}. Rename that module or put mixbo first "
        "on sys.path (reinstall with `pip install mixbo`)."
    )

try:
    import ray.tune  # noqa: F401
except ImportError as _err:  # pragma: no cover - depends on the installation
    raise ImportError(
        'ray_plugins needs Ray Tune: install it with `pip install "mixbo[ray]"`.'
    ) from _err

from ray_plugins._base import MixedBOSearch  # noqa: E402
from ray_plugins._space import Dimension, TuneSpace  # noqa: E402
from ray_plugins.bofm import BOFMSearch  # noqa: E402
from ray_plugins.casmopolitan import CasmopolitanSearch  # noqa: E402
from ray_plugins.cocabo import CoCaBOSearch  # noqa: E402
from ray_plugins.mixbo import MixboSearch  # noqa: E402

__all__ = [
    "BOFMSearch",
    "CasmopolitanSearch",
    "CoCaBOSearch",
    "Dimension",
    "MixboSearch",
    "MixedBOSearch",
    "TuneSpace",
]
