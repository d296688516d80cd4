"""BO-FM's options (Oh et al., UAI 2021): checked when built, light to import."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from common.batch.busy import BusyPolicy
from common.methods.options import MethodOptions, check_integer

if TYPE_CHECKING:
    from common.methods.bofm.strategy import BOFM


@dataclass(frozen=True)
class BOFMOptions(MethodOptions):
    """BO-FM's options.

    Categoricals are complete graphs, integers with at most ``max_path_values`` values (default
    :data:`common.models.kernels.frequency_modulated.PATH_GRAPH_MAX_VALUES`) path graphs, larger
    ones continuous; ``graphs`` maps a discrete parameter's name to the adjacency matrix of a graph
    of its values (choice indices for a categorical). Log-EI is maximised by alternating graph hill
    climbing and L-BFGS-B from ``n_starts`` starts: the best of ``n_raw`` random rows and of
    ``n_spray`` perturbations of the best observed rows.
    """

    graphs: Mapping[str, Any] | None = None
    max_path_values: int | None = None
    n_raw: int = 512
    n_spray: int = 128
    n_starts: int = 10

    def __post_init__(self) -> None:
        if self.graphs is None:
            object.__setattr__(self, "graphs", {})
        if not isinstance(self.graphs, Mapping):
            raise ValueError(
                f"graphs must map parameter names to adjacency matrices, got {self.graphs!r}."
            )
        object.__setattr__(self, "graphs", dict(self.graphs))
        if self.max_path_values is not None:
            check_integer("max_path_values", self.max_path_values, 2)
        check_integer("n_raw", self.n_raw, 1)
        check_integer("n_spray", self.n_spray, 0)
        check_integer("n_starts", self.n_starts, 1)

    def make(self, busy: BusyPolicy) -> BOFM:
        # torch boundary: the strategy (torch, gpytorch) loads with the first model suggestion
        from common.methods.bofm.strategy import BOFM

        return BOFM(self, busy)
