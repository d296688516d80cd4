import json
import logging
import os
import subprocess
import sys

import optuna
import pytest

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _reaches(logger: logging.Logger, handler: logging.Handler) -> bool:
    """Whether ``logger``'s records already reach ``handler`` (on it, or up its propagation)."""
    current: logging.Logger | None = logger
    while current is not None:
        if handler in current.handlers:
            return True
        current = current.parent if current.propagate else None
    return False


@pytest.fixture
def capture_logs(caplog):
    """``capture_logs(name, level)``: ``caplog`` records ``name``'s logger at ``level``, each
    record once. pytest (9.2 on) attaches ``caplog``'s handler to loggers that do not propagate,
    such as Optuna's and Ray's; it is added here only where it is not already reached, so a
    record is never counted twice, whichever pytest runs the tests."""
    attached: list[logging.Logger] = []

    def capture(name: str, level: int = logging.WARNING):
        logger = logging.getLogger(name)
        if not _reaches(logger, caplog.handler):
            logger.addHandler(caplog.handler)
            attached.append(logger)
        caplog.set_level(level, logger=name)
        return caplog

    yield capture
    for logger in attached:
        logger.removeHandler(caplog.handler)


@pytest.fixture(params=["cocabo", "casmopolitan", "bofm", "mixbo"])
def sampler_cls(request):
    """Each of mixbo's Optuna samplers in turn."""
    import optuna_plugins

    return {
        "cocabo": optuna_plugins.CoCaBOSampler,
        "casmopolitan": optuna_plugins.CasmopolitanSampler,
        "bofm": optuna_plugins.BOFMSampler,
        "mixbo": optuna_plugins.MixboSampler,
    }[request.param]


@pytest.fixture
def run_as_user(tmp_path):
    """``run_as_user(*args)``: ``python *args`` as a user runs it, in a fresh interpreter whose
    folder and home are ``tmp_path`` (so Ray Tune's ``~/ray_results`` is never the user's), with
    the repository on its path; the completed process."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def run(*args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "HOME": str(tmp_path), "RAY_USAGE_STATS_ENABLED": "0"}
        env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
        return subprocess.run(
            [sys.executable, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=400,
        )

    return run


@pytest.fixture
def optuna_logs(capture_logs):
    """Warnings on Optuna's loggers (mixbo's Optuna samplers log to ``optuna.mixbo``)."""
    return capture_logs("optuna")


@pytest.fixture
def ray_logs(capture_logs):
    """Warnings on mixbo's Tune logger (it lives under Ray's logger, which does not propagate)."""
    return capture_logs("ray.tune.search.mixbo")


@pytest.fixture
def fit_caps(monkeypatch) -> list[int]:
    """The iteration cap of every GP hyper-parameter fit (``MAPObjective.minimise``) made while
    the test runs, in order."""
    from common.models.map_fit import MAPObjective

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
