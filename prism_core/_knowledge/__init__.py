"""Layer 2, what Prism knows about this process and host: plugin discovery, backends, variants
as plugins declare them, host detection.

Imports only layer 1 and the base modules; announces reloads through :mod:`prism_core._events`.
"""
