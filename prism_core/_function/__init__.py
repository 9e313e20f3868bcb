"""Placing whole functions: ``@prism_core.function`` runs a function's body on one backend and
device per signature (docs/functions.md).  A feature above dispatch: it reaches the kernel
through scopes, the backends' array contract and ``explain``'s ``__prism_explain__`` hook."""

from prism_core._function.candidates import PlacementCandidate
from prism_core._function.placed import PlacedFunction, function
from prism_core._function.report import FunctionDecision, FunctionReport

__all__ = ["FunctionDecision", "FunctionReport", "PlacedFunction", "PlacementCandidate", "function"]
