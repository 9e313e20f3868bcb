"""TEST ONLY: Prism plugins that fail in every way a plugin can (one module per failure mode),
and ``heavy_lazy``, a well-behaved plugin that imports its framework lazily.  Never publish."""
