import json
import logging
import os
import subprocess
import sys

import optuna
import pytest

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture
def optuna_logs(caplog):
    """Warnings on Optuna's loggers (mixbo's Optuna samplers log to ``optuna.mixbo``)."""
    optuna.logging.enable_propagation()
    caplog.set_level(logging.WARNING, logger="optuna")
    yield caplog
    optuna.logging.disable_propagation()


@pytest.fixture
def ray_logs(caplog):
    """Warnings on mixbo's Tune logger (it lives under Ray's logger, which does not propagate)."""
    logger = logging.getLogger("ray.tune.search.mixbo")
    logger.addHandler(caplog.handler)
    caplog.handler.setLevel(logging.WARNING)
    yield caplog
    logger.removeHandler(caplog.handler)


@pytest.fixture
def fit_caps(monkeypatch) -> list[int]:
    """The iteration cap of every GP hyper-parameter fit (``MAPObjective.minimise``) made while
    the test runs, in order."""
    from common.map_fit import MAPObjective

    caps: list[int] = []
    real = MAPObjective.minimise

    def spy(objective, maxiter):
        caps.append(maxiter)
        return real(objective, maxiter)

    monkeypatch.setattr(MAPObjective, "minimise", spy)
    return caps


@pytest.fixture
def fresh_process_with_two_blas_threads():
    """``run(code)``: ``code`` in a new Python process whose OpenBLAS starts two threads (no other
    thread limit set), returning the JSON its last output line prints."""

    def run(code: str):
        env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
        env["OPENBLAS_NUM_THREADS"] = "2"
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    return run


@pytest.fixture
def plain_twin():
    """``twin(model)``: a plain BoTorch ``SingleTaskGP`` sharing ``model``'s training data,
    likelihood, kernel and mean, in eval mode: gpytorch's own prediction, the reference that
    mixbo's faster posterior paths are compared against."""
    from botorch.models import SingleTaskGP

    def twin(model):
        return SingleTaskGP(
            model.train_inputs[0],
            model.train_targets[:, None],
            likelihood=model.likelihood,
            covar_module=model.covar_module,
            mean_module=model.mean_module,
            outcome_transform=None,
        ).eval()

    return twin
