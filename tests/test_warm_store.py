"""GP fits stored with the study, so that a new worker starts where the others left off, and the
refit schedule that keeps long studies from refitting on every observation."""

from __future__ import annotations

import copy

import numpy as np
import optuna
import pytest
import torch

from common.batch.busy import BusyPolicy
from common.methods.cocabo.options import CoCaBOOptions
from common.models import refit
from common.models.gp import SharedTrainGP
from common.models.refit import COLD_SUBSET, cold_subset, refit_due
from common.models.warm_store import dumps, key_digest, loads
from common.space.history import History
from common.space.mixed_space import Categorical, Float, MixedSpace
from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler

SAMPLERS = {
    "cocabo": CoCaBOSampler,
    "casmopolitan": CasmopolitanSampler,
    "bofm": BOFMSampler,
    "mixbo": MixboSampler,
}
FITS_KEY = "mixbo:warm_fits"


def objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -3, 3)
    n = trial.suggest_int("n", 1, 9)
    c = trial.suggest_categorical("c", ["a", "b", "c"])
    return (x - 1) ** 2 + abs(n - 4) / 4 + (c != "b")


def test_fits_round_trip_exactly_and_bad_text_is_no_fits() -> None:
    params = {"a.raw": torch.tensor([[0.1, -2.0 / 3.0]], dtype=torch.float64), "b": torch.ones(1)}
    back = loads(dumps({"k": params, "bad": {"c": torch.tensor([float("nan")])}}))
    assert set(back) == {"k"}  # a non-finite fit is not worth storing
    assert back["k"]["a.raw"].shape == (1, 2)
    assert torch.equal(back["k"]["a.raw"], params["a.raw"])  # floats written exactly
    assert loads("not json") == loads('{"version": 99, "fits": {}}') == loads("[1]") == {}
    assert key_digest(("cocabo", 1)) == key_digest(("cocabo", 1)) != key_digest(("cocabo", 2))


def _stored_fits(trial: optuna.trial.FrozenTrial) -> bool:
    return any(k.startswith(FITS_KEY) and v for k, v in trial.system_attrs.items())


def _study_of(trials, strip_fits: bool = False) -> optuna.Study:
    study = optuna.create_study()
    for t in trials:
        t = copy.deepcopy(t)
        if strip_fits:
            t.system_attrs = {k: v for k, v in t.system_attrs.items() if FITS_KEY not in k}
        study.add_trial(t)
    return study


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_a_new_worker_starts_from_the_fits_stored_with_the_study(name) -> None:
    """A sampler joining a study fits as the worker that stored the fits would have: its first
    suggestion and fits equal those of that worker's next suggestion (same seed, so the same
    random stream for the trial), and differ without the stored fits (fitted from the priors)."""
    make = SAMPLERS[name]
    first = make(seed=3, n_startup_trials=5)
    study = optuna.create_study(sampler=first)
    study.optimize(objective, n_trials=9)
    assert _stored_fits(study.trials[-1])
    assert not any(_stored_fits(t) for t in study.trials[:5])  # the random design fits nothing

    def next_suggestion(sampler, trials, strip=False):
        other = _study_of(trials, strip)
        other.sampler = sampler
        trial = other.ask()
        objective(trial)
        return trial.params, sampler._engine.warm_fits()

    continued = next_suggestion(copy.deepcopy(first), study.trials)
    joined = next_suggestion(make(seed=3, n_startup_trials=5), study.trials)
    assert joined == continued
    cold = next_suggestion(make(seed=3, n_startup_trials=5), study.trials, strip=True)
    assert cold[1] != continued[1]


def test_a_worker_does_not_adopt_fits_to_other_targets() -> None:
    """`MixboSampler` (blended targets) and `CasmopolitanSampler` (copula ranks) run the same
    model on different targets: on a study where only the other ran, a new worker fits afresh."""
    study = optuna.create_study(sampler=CasmopolitanSampler(seed=3, n_startup_trials=5))
    study.optimize(objective, n_trials=9)
    assert _stored_fits(study.trials[-1])
    params, fits = [], []
    for strip in (False, True):
        other = _study_of(study.trials, strip)
        other.sampler = MixboSampler(seed=3, n_startup_trials=5)
        objective(trial := other.ask())
        params.append(trial.params)
        fits.append(loads(other.sampler._engine.warm_fits()))
    ours = set(fits[1])  # the fits of a worker that found none stored
    assert params[0] == params[1] and ours and ours <= set(fits[0])
    assert all(torch.equal(fits[0][d][k], fits[1][d][k]) for d in ours for k in fits[1][d])


def test_stored_fits_that_do_not_fit_the_model_are_ignored(optuna_logs) -> None:
    study = optuna.create_study(sampler=CoCaBOSampler(seed=0, n_startup_trials=3))
    study.optimize(objective, n_trials=5)
    trials = copy.deepcopy(study.trials)
    for t in trials:  # fits whose shapes do not match the model's: the new worker refits
        attrs = dict(t.system_attrs)
        if attrs.get(f"{FITS_KEY}:0"):
            fits = loads(attrs[f"{FITS_KEY}:0"])
            wrong = {d: {k: torch.zeros(7) for k in p} for d, p in fits.items()}
            attrs[f"{FITS_KEY}:0"] = dumps(wrong)
            t.system_attrs = attrs
    other = _study_of(trials)
    other.sampler = CoCaBOSampler(seed=0, n_startup_trials=3)
    other.optimize(objective, n_trials=2)
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in other.trials)
    assert not [r for r in optuna_logs.records if "fits" in r.getMessage()]  # nothing to say


def test_refits_follow_every_until_twice_refit_growth_then_one_percent_of_growth() -> None:
    assert [n for n in range(1, 200) if not refit_due(n)] == []
    assert [n for n in range(1, 300) if refit_due(n, 2)] == list(range(2, 300, 2))
    due = [n for n in range(1000, 1100) if refit_due(n, 2)]
    assert due == list(range(1000, 1100, 10))
    gaps = np.diff([n for n in range(100, 5000) if refit_due(n, 2)])
    assert gaps.max() <= 0.01 * 5000 + 1


def test_a_long_history_conditions_the_last_fit_between_refits(monkeypatch) -> None:
    space = MixedSpace([Float("x", 0.0, 1.0), Float("y", 0.0, 1.0), Categorical("c", [0, 1])])
    rng = np.random.default_rng(0)
    configs = space.decode(space.sample(205, rng))
    values = np.array([(c["x"] - 0.3) ** 2 + c["y"] + c["c"] for c in configs])
    fits = []
    real = refit.fit_gp
    monkeypatch.setattr(refit, "fit_gp", lambda *a, **k: fits.append(len(a[1])) or real(*a, **k))
    extended = []
    grow = SharedTrainGP._extended_factor

    def counted(self, X):
        L = grow(self, X)
        if L is not None:
            extended.append(len(X))
        return L

    monkeypatch.setattr(SharedTrainGP, "_extended_factor", counted)
    cocabo = CoCaBOOptions().make(BusyPolicy())
    for n in (201, 202, 203, 204):  # 1 fits a subsample (nothing known yet), 2, 4 are due
        cocabo.suggest(space, History(tuple(configs[:n]), values[:n]), 1, rng)
    assert fits == [len(cold_subset(201)), 202, 204]
    assert len(cold_subset(201)) <= COLD_SUBSET
    assert extended == [203]  # the conditioned model grows the factor of 202's fit


def test_a_fit_from_the_priors_in_a_long_study_sees_an_even_subsample() -> None:
    assert list(cold_subset(COLD_SUBSET)) == list(range(COLD_SUBSET))  # short: every point
    rows = cold_subset(1000)
    assert len(rows) == COLD_SUBSET and rows[0] == 0 and rows[-1] == 999
    gap = 999 / (COLD_SUBSET - 1)
    assert np.all(np.abs(np.diff(rows) - gap) <= 1)  # evenly spread
    assert list(rows) == list(cold_subset(1000))  # the same in every worker


@pytest.mark.parametrize("name", ["casmopolitan", "bofm"])
def test_a_first_worker_on_a_long_study_fits_a_subsample_then_refits_on_all(
    name, monkeypatch
) -> None:
    import common.methods.bofm.strategy as bofm_strategy
    import common.methods.casmopolitan.strategy as casmopolitan_strategy
    from common.methods.bofm.options import BOFMOptions
    from common.methods.casmopolitan import restart_centre
    from common.methods.casmopolitan.options import CasmopolitanOptions
    from common.methods.casmopolitan.trust_region import LOCAL_DATA
    from common.models import kernel_choice

    space = MixedSpace([Float("x", 0.0, 1.0), Categorical("c", [0, 1, 2])])
    rng = np.random.default_rng(1)
    configs = space.decode(space.sample(260, rng))
    values = np.array([(c["x"] - 0.3) ** 2 + (c["c"] == 1) for c in configs])
    fits = []
    if name == "casmopolitan":
        module, attr = kernel_choice, "fit_gp_scored"
    else:
        module, attr = bofm_strategy, "fit_fm_gp"
    real = getattr(module, attr)
    restarting = []  # CASMOPOLITAN's restart GP on the restarts' bests is not the model
    monkeypatch.setattr(
        module, attr, lambda *a, **k: restarting or fits.append(len(a[1])) or real(*a, **k)
    )
    real_restart = restart_centre.choose_restart_centre

    def restart(*a, **k):
        restarting.append(True)
        try:
            return real_restart(*a, **k)
        finally:
            restarting.clear()

    monkeypatch.setattr(casmopolitan_strategy, "choose_restart_centre", restart)
    options = CasmopolitanOptions() if name == "casmopolitan" else BOFMOptions()
    strategy = options.make(BusyPolicy())
    for n in (250, 251, 252, 253, 254, 255):  # cold, then a due refit within 1%
        strategy.suggest(space, History(tuple(configs[:n]), values[:n]), 1, rng)
    assert fits[0] == COLD_SUBSET  # the first fit saw the subsample only
    if name == "casmopolitan":  # and a later, scheduled refit all of its data: the trust
        assert max(fits) == LOCAL_DATA  # region's nearest observations
    else:
        assert max(fits) >= 250


def test_fits_stored_before_the_kernel_choice_leave_a_long_study_to_the_subsample(
    monkeypatch,
) -> None:
    """A one-kernel fit stored by an earlier CASMOPOLITAN is not adopted: the first fit of a
    250-trial study sees the cold subsample, as on a study with no stored fits, instead of every
    trial from the priors."""
    from common.methods.casmopolitan.options import CasmopolitanOptions
    from common.models import kernel_choice
    from common.models.gp import fit_gp
    from common.models.kernels.mixture import casmopolitan_kernels
    from common.models.warm_store import dumps, key_digest

    space = MixedSpace([Float("x", 0.0, 1.0), Categorical("c", [0, 1, 2])])
    rng = np.random.default_rng(1)
    configs = space.decode(space.sample(250, rng))
    values = np.array([(c["x"] - 0.3) ** 2 + (c["c"] == 1) for c in configs])
    X = space.encode(configs)
    _, old = fit_gp(X[:30], values[:30], casmopolitan_kernels([0], [1])[0])
    fits = []
    real = kernel_choice.fit_gp_scored
    monkeypatch.setattr(
        kernel_choice, "fit_gp_scored", lambda *a, **k: fits.append(len(a[1])) or real(*a, **k)
    )
    strategy = CasmopolitanOptions().make(BusyPolicy())
    strategy.adopt_warm(dumps({key_digest(("casmopolitan", space)): old}))
    strategy.suggest(space, History(tuple(configs), values), 1, rng)
    assert max(fits) == COLD_SUBSET


@pytest.mark.parametrize("name", ["casmopolitan", "cocabo"])
def test_a_first_workers_fit_on_the_subsample_is_as_brief_as_a_refit(name, monkeypatch) -> None:
    """The fit from the priors on a long study's cold subsample stops after
    ``COLD_SUBSET_MAXITER`` iterations (a starting point, not a converged fit); the scheduled refit
    on all the rows then continues from it, warm-started."""
    from common.methods.casmopolitan.options import CasmopolitanOptions
    from common.models import map_fit
    from common.models.gp import FIT_MAXITER, WARM_FIT_MAXITER
    from common.models.refit import COLD_SUBSET_MAXITER

    space = MixedSpace([Float("x", 0.0, 1.0), Float("y", 0.0, 1.0), Categorical("c", [0, 1, 2])])
    rng = np.random.default_rng(3)
    configs = space.decode(space.sample(120, rng))
    values = np.array([(c["x"] - 0.3) ** 2 + c["y"] + (c["c"] == 1) for c in configs])
    calls = []
    real = map_fit.MAPObjective.minimise

    def minimise(self, maxiter):
        calls.append((len(self.y), maxiter))
        return real(self, maxiter)

    monkeypatch.setattr(map_fit.MAPObjective, "minimise", minimise)
    if name == "casmopolitan":
        options = CasmopolitanOptions(warping="evidence", refit_every=1)
    else:
        options = CoCaBOOptions()
    strategy = options.make(BusyPolicy())
    strategy.suggest(space, History(tuple(configs[:100]), values[:100]), 1, rng)
    cold = [maxiter for rows, maxiter in calls if rows == COLD_SUBSET]
    assert cold and max(cold) == COLD_SUBSET_MAXITER < FIT_MAXITER
    calls.clear()
    strategy.suggest(space, History(tuple(configs[:101]), values[:101]), 1, rng)
    refits = [maxiter for rows, maxiter in calls if rows == 101]
    assert refits and max(refits) == WARM_FIT_MAXITER  # continued from the brief fit


def test_a_study_with_many_objectives_and_constraints_keeps_every_models_warm_start(
    monkeypatch,
) -> None:
    """Four objectives and four constraints: nine GPs per suggestion (the scalarisation's, one per
    objective, one per constraint), each refitted from its last fit, none from the priors."""
    from common.models import kernel_choice

    def objective(trial: optuna.Trial) -> tuple[float, ...]:
        x = [trial.suggest_float(f"x{i}", 0, 1) for i in range(3)]
        c = trial.suggest_categorical("c", ["a", "b"])
        trial.set_user_attr("c", [x[0] - 0.9, x[1] - 0.95, x[2] - 0.97, x[0] + x[1] - 1.9])
        return x[0], x[1], 1 - x[0], x[2] + (c == "a")

    sampler = MixboSampler(seed=0, constraints_func=lambda t: t.user_attrs["c"])
    study = optuna.create_study(directions=["minimize"] * 4, sampler=sampler)
    study.optimize(objective, n_trials=12)
    starts = []
    for module, name in ((kernel_choice, "fit_gp_scored"), (refit, "fit_gp")):
        real = getattr(module, name)

        def counted(*a, real=real, **k):
            starts.append(a[3] if len(a) > 3 else k.get("warm_start"))
            return real(*a, **k)

        monkeypatch.setattr(module, name, counted)
    study.optimize(objective, n_trials=2)
    assert len(starts) >= 5 * 4  # a refit: the four alternatives of five chosen models, ...
    assert all(start is not None for start in starts)
