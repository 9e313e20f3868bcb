"""Layer 3, dispatch: ops and their catalogue, scopes, plans, fallback and explain.

Imports layers 1 and 2; learns of their reloads through :mod:`prism_core.kernel.events`.
"""
