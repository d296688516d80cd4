"""What every mixbo Optuna sampler shares: Optuna's conventions around a :class:`common.Strategy`.

The sampler only translates. Completed trials become a :class:`common.History` (values flipped for
maximisation, failed trials dropped, ±inf clipped), running trials its pending configurations, the
strategy suggests, and the result is returned as plain Python values. Parameters outside the
intersection search space go to the independent sampler.
"""

from __future__ import annotations

import json
import threading
from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from common.history import History
from common.runtime import single_torch_thread
from common.space import MixedSpace
from common.strategy import propose
from optuna_plugins._space import to_mixed_space

if TYPE_CHECKING:
    from common.strategy import Strategy

_logger = optuna.logging.get_logger("optuna.mixbo")

# Each trial's relative parameters are shared with other threads and processes through its system
# attributes (as Optuna's GPSampler does), so that a trial sampled elsewhere but not yet reported
# still counts as a busy point. Values are internal representations (category indices), as JSON
# chunked to the RDB storage's column limit.
_RELATIVE_PARAMS_KEY = "mixbo:relative_params"
_SYSTEM_ATTR_MAX_LENGTH = 2045
_MAX_CLAIMS = 3  # picks per trial before a configuration taken each time sends it to random
_RANDOM_DRAWS = 256  # random configurations tried for a free one after that


def _store_relative_params(
    study: Study, trial: FrozenTrial, params: dict[str, Any], space: dict[str, BaseDistribution]
) -> None:
    text = json.dumps({k: space[k].to_internal_repr(v) for k, v in params.items()})
    chunks = [
        text[i : i + _SYSTEM_ATTR_MAX_LENGTH] for i in range(0, len(text), _SYSTEM_ATTR_MAX_LENGTH)
    ]
    # an empty chunk ends the text, so a shorter re-sampling never reads an older, longer tail
    for i, chunk in enumerate([*chunks, ""]):
        study._storage.set_trial_system_attr(trial._trial_id, f"{_RELATIVE_PARAMS_KEY}:{i}", chunk)


def _pending_params(
    trial: FrozenTrial, space: dict[str, BaseDistribution]
) -> dict[str, Any] | None:
    """A running trial's parameters over ``space`` (sampled or only drawn), if all are known."""
    chunks, i = [], 0
    while chunk := trial.system_attrs.get(f"{_RELATIVE_PARAMS_KEY}:{i}"):
        chunks.append(chunk)
        i += 1
    params: dict[str, Any] = {}
    if chunks:
        try:
            stored = json.loads("".join(chunks))
            for name, internal in stored.items():
                if name in space and space[name]._contains(internal):
                    params[name] = space[name].to_external_repr(internal)
        except (ValueError, TypeError, IndexError):
            params = {}
    for name, value in trial.params.items():
        if name in space:
            dist = trial.distributions[name]
            if space[name] == dist:
                params[name] = value
    return params if all(name in params for name in space) else None


class MixedBOSampler(BaseSampler):
    """Base of mixbo's samplers; subclasses say which :class:`common.Strategy` to run.

    ``pending``, ``penalizer`` and ``lipschitz`` (every sampler's arguments) say how running
    trials count, other threads' and processes' included: ``pending="playbook"`` penalises the
    acquisition around them (PLAyBOOK, the default), ``"kriging_believer"`` conditions the GP on its
    mean there, ``"ignore"`` neither; ``penalizer`` is PLAyBOOK's ``"hlp"`` (hard local, default) or
    ``"lp"``, ``lipschitz`` its ``"local"`` (per busy point, default) or ``"global"`` estimate.
    Subclasses pass ``self._pending`` to their strategy.
    """

    def __init__(
        self,
        *,
        seed: int | None = None,
        n_startup_trials: int = 10,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
    ) -> None:
        from common.strategy import check_pending_options

        check_pending_options(pending, penalizer, lipschitz)
        self._pending = dict(pending=pending, penalizer=penalizer, lipschitz=lipschitz)
        if n_startup_trials < 0:
            raise ValueError(f"n_startup_trials must be >= 0, got {n_startup_trials}.")
        self._seed = seed
        self._rng = np.random.RandomState(seed)
        self._n_startup_trials = n_startup_trials
        self._independent_sampler = independent_sampler or RandomSampler(seed=seed)
        self._warn_independent_sampling = warn_independent_sampling
        self._search_space = IntersectionSearchSpace()
        self._strategy: Strategy | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ for subclasses
    @abstractmethod
    def _make_strategy(self) -> Strategy:
        """The method's strategy (called once, lazily, so importing the sampler stays cheap)."""

    # ------------------------------------------------------------------ Optuna API
    def reseed_rng(self) -> None:
        with self._lock:
            self._rng = np.random.RandomState()
        self._independent_sampler.reseed_rng()

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return {
            name: dist
            for name, dist in self._search_space.calculate(study).items()
            if not dist.single()
        }

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        self._check_single_objective(study)
        if not search_space:
            return {}
        space = to_mixed_space(search_space)
        for _ in range(_MAX_CLAIMS):
            history = self._history_with_pending(study, trial, search_space)
            if not self._design_done(history):
                return {}
            config = self._propose(space, history, trial)
            if config is None:
                return {}
            params = {name: config[name] for name in search_space}
            _store_relative_params(study, trial, params, search_space)
            held = self._held_elsewhere(study, trial, search_space)
            if params not in held:
                return params
        free = self._random_free_params(space, held, search_space)
        _logger.warning(
            f"{type(self).__name__}: trial {trial.number}'s configuration was taken by another "
            f"trial {_MAX_CLAIMS} times in a row; "
            + (
                "it takes a random free configuration rather than run one twice."
                if free is not None
                else "every configuration it drew is taken, so it runs one twice."
            )
        )
        if free is None:
            return params
        _store_relative_params(study, trial, free, search_space)
        return free

    def _random_free_params(
        self,
        space: MixedSpace,
        held: list[dict[str, Any]],
        search_space: dict[str, BaseDistribution],
    ) -> dict[str, Any] | None:
        """A uniformly random configuration no other trial holds, if one of a few draws is free.

        Only a search space with fewer configurations than trials (say 3 × 3 categories) runs out.
        """
        with self._lock:
            rng = np.random.default_rng(int(self._rng.randint(2**31 - 1)))
        for config in space.decode(space.sample(_RANDOM_DRAWS, rng)):
            params = {name: config[name] for name in search_space}
            if params not in held:
                return params
        return None

    def _design_done(self, history: History) -> bool:
        """Whether the random initial design is complete and there is data to fit.

        Running trials count towards ``n_startup_trials`` (as in TPE with ``constant_liar`` and in
        our Ray searchers): with k workers, waiting for that many *completed* trials would hand out
        k − 1 more random configurations, a third of a 50-trial budget at k = 8.
        """
        issued = len(history) + len(history.pending)
        return len(history) > 0 and issued >= self._n_startup_trials

    def _history_with_pending(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> History:
        """Completed trials as the history, other running trials' parameters as pending."""
        trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING))
        completed = [t for t in trials if t.state == TrialState.COMPLETE]
        history = self._history(study, completed, search_space)
        pending = [
            p
            for t in trials
            if t.state == TrialState.RUNNING and t.number != trial.number
            if (p := _pending_params(t, search_space)) is not None
        ]
        return History(history.configs, history.values, tuple(pending))

    def _propose(self, space, history: History, trial: FrozenTrial) -> dict[str, Any] | None:
        with self._lock:
            seed = int(self._rng.randint(2**31 - 1))
            strategy = self._strategy = self._strategy or self._make_strategy()
            try:
                with single_torch_thread():
                    config = propose(strategy, space, history, 1, np.random.default_rng(seed))[0]
            except Exception as err:  # never crash the user's study
                _logger.warning(
                    f"{type(self).__name__} failed to suggest ({type(err).__name__}: {err}); "
                    f"trial {trial.number} falls back to "
                    f"{type(self._independent_sampler).__name__}."
                )
                return None
        return config

    @staticmethod
    def _held_elsewhere(
        study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> list[dict[str, Any]]:
        """The parameters other trials hold (completed, or running and known), read after ours.

        Two workers that sample at the same moment do not see each other's trial as busy (and the
        model, fitted to the same data, can put both at the same bound). Each re-reads the storage
        after storing its own parameters; a worker that finds its configuration taken samples again
        (both may, in which case both do). Whichever of two workers stored last sees the other's
        claim, so a check that passes is never followed by a conflicting one that also passes; a
        worker whose picks are taken ``_MAX_CLAIMS`` times in a row takes a random free
        configuration instead (``sample_relative``).
        """
        others = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING))
        held = []
        for t in others:
            if t.number == trial.number:
                continue
            params = (
                {k: t.params.get(k) for k in search_space}
                if t.state == TrialState.COMPLETE
                else _pending_params(t, search_space)
            )
            if params is not None:
                held.append(params)
        return held

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        self._check_single_objective(study)
        if self._warn_independent_sampling:  # once past the design, counted as _design_done does
            issued = study.get_trials(
                deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING)
            )
            if sum(t.number != trial.number for t in issued) >= self._n_startup_trials:
                self._log_independent_sampling(trial, param_name)
        return self._independent_sampler.sample_independent(
            study, trial, param_name, param_distribution
        )

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._independent_sampler.before_trial(study, trial)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        self._independent_sampler.after_trial(study, trial, state, values)

    # ------------------------------------------------------------------ helpers
    def _check_single_objective(self, study: Study) -> None:
        if len(study.directions) > 1:
            raise ValueError(
                f"{type(self).__name__} supports single-objective studies only; for a "
                "multi-objective study use optuna.samplers.TPESampler, GPSampler or NSGAIISampler."
            )

    def _history(
        self, study: Study, trials: Sequence[FrozenTrial], search_space: dict[str, BaseDistribution]
    ) -> History:
        usable = [
            t
            for t in sorted(trials, key=lambda t: t.number)
            if t.value is not None
            and not np.isnan(t.value)
            and all(name in t.params for name in search_space)
        ]
        values = np.asarray([t.value for t in usable], dtype=float)
        if study.direction == StudyDirection.MAXIMIZE:
            values = -values
        values = self._clip_infinite(values)
        configs = [{name: t.params[name] for name in search_space} for t in usable]
        return History(tuple(configs), values)

    def _clip_infinite(self, values: np.ndarray) -> np.ndarray:
        finite = np.isfinite(values)
        if finite.all():
            return values
        _logger.warning(
            f"{type(self).__name__}: {int((~finite).sum())} objective value(s) are infinite; they "
            "are clipped to the range of the finite values for the GP."
        )
        if not finite.any():
            return np.zeros_like(values)
        lo, hi = values[finite].min(), values[finite].max()
        return np.clip(values, lo, hi)

    def _log_independent_sampling(self, trial: FrozenTrial, param_name: str) -> None:
        name = type(self).__name__
        _logger.warning(
            f"The parameter `{param_name}` in trial#{trial.number} is sampled independently by "
            f"using `{type(self._independent_sampler).__name__}` instead of `{name}` "
            "(optimization performance may be degraded). Dynamic or conditional search spaces "
            f"are not supported by `{name}`. You can suppress this warning by setting "
            f"`warn_independent_sampling` to `False` in the constructor of `{name}`, if this "
            "independent sampling is intended behavior."
        )

    # ------------------------------------------------------------------ pickling / copying
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
