"""Optuna's own sampler conformance suite, run against every mixbo sampler."""

import pytest
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    MultiObjectiveSamplerTestCase,
    RelativeSamplerTestCase,
)

from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler

# n_startup_trials=1 sends every suggestion after the first trial through the GP path.
SAMPLERS = {"cocabo": lambda: CoCaBOSampler(seed=0, n_startup_trials=1)}
SAMPLERS["casmopolitan"] = lambda: CasmopolitanSampler(seed=0, n_startup_trials=1)
SAMPLERS["bofm"] = lambda: BOFMSampler(seed=0, n_startup_trials=1)
SAMPLERS["mixbo"] = lambda: MixboSampler(seed=0, n_startup_trials=1)


class _OurSamplers:
    @pytest.fixture(params=list(SAMPLERS))
    def sampler(self, request):
        return SAMPLERS[request.param]


class TestBasic(_OurSamplers, BasicSamplerTestCase):
    pass


class TestRelative(_OurSamplers, RelativeSamplerTestCase):
    pass


class TestMultiObjective(_OurSamplers, MultiObjectiveSamplerTestCase):
    pass
