"""Workload patterns: workloads that are not one op, characterised by how many flops they do
per byte, how parallel they are, how they read memory and how much their branches diverge (the
seed's ``register_pattern``).  ``PerformanceModel.predict_performance`` predicts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prism_core._tuning.figures import Figures
from prism_core._tuning.op_work import Work
from prism_core.kernel.errors import did_you_mean
from prism_core.kernel.public import home

__all__ = ["WorkloadPattern", "checked_choice"]


PARALLELISM = ("high", "medium", "low")
ACCESS_PATTERNS = ("sequential", "structured", "strided", "random")
DIVERGENCE = ("low", "medium", "high")
#: Fraction of the memory bandwidth a pattern of access uses: whole cache lines for sequential
#: and structured (tiled, stencil) access, about half of each line for strided access, one 8-byte
#: word of each 64-byte line for random access.
ACCESS_FACTOR = {"sequential": 1.0, "structured": 1.0, "strided": 0.5, "random": 0.125}
#: Fraction of the peak left by branch divergence on devices that execute in lockstep (GPUs'
#: warps, and the vector and systolic units of the other accelerators): each level of divergence
#: runs both sides of a branch.  CPUs (branch predictors, independent cores) are not slowed.
DIVERGENCE_FACTOR = {"low": 1.0, "medium": 0.5, "high": 0.25}
#: Fraction of the compute units a workload keeps busy: all for "high", half for "medium", one
#: for "low" (1 / compute_units; all when the description has no compute_units).
PARALLELISM_FACTOR = {"high": 1.0, "medium": 0.5}


def checked_choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
        raise ValueError(
            f"register_pattern(): {what} must be one of {', '.join(map(repr, allowed))}; got "
            f"{value!r}{hint}"
        )
    return value


@home("prism_core.tuning")
@dataclass(frozen=True)
class WorkloadPattern:
    """A workload that is not one op, characterised as the seed's ``register_pattern`` does:
    ``compute_intensity`` flops per byte of data, how parallel it is, how it reads memory and
    how much its branches diverge, in data type ``dtype``."""

    name: str
    compute_intensity: float
    parallelism_degree: str = "high"
    memory_access_pattern: str = "sequential"
    branch_divergence: str = "low"
    dtype: str = "fp32"

    def work(self, data_size: float) -> Work:
        return Work(self.compute_intensity * data_size, data_size)

    def compute_factor(self, figures: Figures) -> float:
        if self.parallelism_degree == "low":
            share = 1.0 / figures.compute_units if figures.compute_units else 1.0
        else:
            share = PARALLELISM_FACTOR[self.parallelism_degree]
        divergence = 1.0 if figures.is_cpu else DIVERGENCE_FACTOR[self.branch_divergence]
        return share * divergence

    def bandwidth_factor(self) -> float:
        return ACCESS_FACTOR[self.memory_access_pattern]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "compute_intensity": self.compute_intensity,
            "parallelism_degree": self.parallelism_degree,
            "memory_access_pattern": self.memory_access_pattern,
            "branch_divergence": self.branch_divergence,
            "dtype": self.dtype,
        }
