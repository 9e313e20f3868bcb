"""Fails when imported: the entry point cannot even be loaded."""

raise ImportError("prism_plugin_broken.broken_import cannot be imported (deliberately broken)")
