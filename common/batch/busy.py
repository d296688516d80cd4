"""How busy points count: the running trials (and a batch's earlier picks) a suggestion avoids."""

from __future__ import annotations

from dataclasses import dataclass

PENDING_METHODS = ("playbook", "kriging_believer", "ignore")
PENALIZERS = ("hlp", "lp")
LIPSCHITZ_ESTIMATES = ("local", "global")


@dataclass(frozen=True)
class BusyPolicy:
    """The busy-point policy shared by every method (PLAyBOOK, Alvi et al., ICML 2019).

    ``pending="playbook"`` (default) penalises the acquisition around each busy point,
    ``"kriging_believer"`` conditions the GP on its own mean there (the comparison baseline),
    ``"ignore"`` does neither. ``penalizer`` is PLAyBOOK's hard local ``"hlp"`` (default) or the
    local ``"lp"`` of González et al.; ``lipschitz`` is the ``"local"`` (per busy point, default)
    or ``"global"`` Lipschitz estimate. Checked when built, so a typo fails at construction.
    """

    pending: str = "playbook"
    penalizer: str = "hlp"
    lipschitz: str = "local"

    def __post_init__(self) -> None:
        if self.pending not in PENDING_METHODS:
            raise ValueError(f"pending must be one of {PENDING_METHODS}, got {self.pending!r}.")
        if self.penalizer not in PENALIZERS:
            raise ValueError(
                f"penalizer must be 'hlp' (hard local) or 'lp', got {self.penalizer!r}."
            )
        if self.lipschitz not in LIPSCHITZ_ESTIMATES:
            raise ValueError(f"lipschitz must be 'local' or 'global', got {self.lipschitz!r}.")
