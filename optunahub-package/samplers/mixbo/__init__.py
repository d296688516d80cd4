"""mixbo's samplers as an OptunaHub package: ``optunahub.load_module("samplers/mixbo")``.

The samplers themselves live in the ``mixbo`` distribution (``pip install -r requirements.txt``);
this package re-exports them so that OptunaHub users reach them the way they reach every other
sampler on the hub.
"""

from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler

__all__ = ["BOFMSampler", "CasmopolitanSampler", "CoCaBOSampler", "MixboSampler"]
