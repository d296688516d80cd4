"""The peers: the optimisers a user would pick instead of mixbo, as baselines of ``mixbo-compare``.

One module per peer, each a thin Optuna sampler (``_sampler.PeerSampler``) around the peer's own
ask/tell interface, with its set-up and its encoding of our parameter types in its docstring:

- ``catcmawm``: CatCMA with Margin (the ``cmaes`` package);
- ``smac``: SMAC3's hyper-parameter-optimisation facade (the ``smac`` package);
- ``ax``: Ax's default generation strategy (the ``ax-platform`` package).

HEBO is not among them: no release of the ``hebo`` package runs beside our numpy, pandas and
pymoo; ``UNAVAILABLE`` keeps its name and the reason, so a comparison that asks for it shows it
skipped with that reason. The packages come with the ``peers`` extra and are imported only when a
peer is built; :func:`missing` names the one to install.

Example::

    sampler = PEERS["smac"].build(seed=0, search_space=distributions, n_trials=100)
    study = optuna.create_study(sampler=sampler)
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass

import optuna
from optuna.distributions import BaseDistribution


@dataclass(frozen=True)
class Peer:
    """A peer: the module and sampler class that drive it, and the package it needs."""

    module: str
    sampler: str
    package: str  # import name
    distribution: str  # pip name

    def build(
        self, seed: int, search_space: Mapping[str, BaseDistribution], n_trials: int
    ) -> optuna.samplers.BaseSampler:
        """The peer's sampler for one study over ``search_space`` with a budget of ``n_trials``."""
        cls = getattr(importlib.import_module(self.module), self.sampler)
        return cls(search_space, seed=seed, n_trials=n_trials)


_HERE = "mixbo_compare.peers"
PEERS: dict[str, Peer] = {
    "catcmawm": Peer(f"{_HERE}.catcmawm", "CatCMAwMSampler", "cmaes", "cmaes"),
    "smac": Peer(f"{_HERE}.smac3", "SMACSampler", "smac", "smac"),
    "ax": Peer(f"{_HERE}.axplatform", "AxSampler", "ax", "ax-platform"),
}


# peers that no installable release runs beside our dependencies: name -> why (see the README)
UNAVAILABLE: dict[str, str] = {
    "hebo": "hebo: no release runs beside numpy 2 and pandas 2+ (0.3.5/0.3.6 need numpy<1.25; "
    "0.3.2 imports pymoo.factory, gone in pymoo 0.6, and calls DataFrame.append, gone in "
    "pandas 2)",
}


def missing(name: str) -> str | None:
    """Why peer ``name`` cannot run here (its package is not installed), or None."""
    peer = PEERS[name]
    if importlib.util.find_spec(peer.package) is None:
        return f"{peer.distribution} not installed (pip install 'mixbo[peers]')"
    return None


__all__ = ["PEERS", "UNAVAILABLE", "Peer", "missing"]
