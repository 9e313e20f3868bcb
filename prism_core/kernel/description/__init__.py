"""Layer 1, device descriptions: the strict YAML loader, the schema, the validation cache, the
library and its search path, described devices, requirements and data types.

Imports nothing above it; announces reloads through :mod:`prism_core.kernel.events`.
"""

#: Largest device file accepted, in bytes.  Real ones are a few kilobytes.  Here rather than in
#: the YAML reader, so that a warm start (every file a cache hit) reads files without importing
#: the reader.
MAX_BYTES = 1 << 20
