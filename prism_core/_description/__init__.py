"""Layer 1, device descriptions: the strict YAML loader, the schema, the validation cache, the
library and its search path, described devices, requirements and data types.

Imports nothing above it; announces reloads through :mod:`prism_core._events`.
"""
