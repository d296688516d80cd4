"""mixbo's samplers as an OptunaHub package: ``optunahub.load_module("samplers/mixbo")``.

The samplers themselves live in the ``mixbo`` distribution; this package re-exports them so that
OptunaHub users reach them the way they reach every other sampler on the hub. ``mixbo`` is on no
package index yet, so loading this package without it says how to install it.
"""

try:
    from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler
except ModuleNotFoundError as missing:
    if missing.name != "optuna_plugins":  # mixbo is there; something it needs is not
        raise
    raise ImportError(
        "samplers/mixbo needs the mixbo distribution (its optuna_plugins package), which no "
        "package index has yet. Install it from a clone of its repository "
        "(`pip install /path/to/mixbo`) or from a wheel built there (`python -m build --wheel`, "
        "then `pip install dist/mixbo-*.whl`), then load this package again."
    ) from missing

__all__ = ["BOFMSampler", "CasmopolitanSampler", "CoCaBOSampler", "MixboSampler"]
