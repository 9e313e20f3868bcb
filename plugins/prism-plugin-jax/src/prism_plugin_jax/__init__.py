"""Prism plugin for JAX: ``jax.numpy`` as a Prism backend (``prism_plugin_jax.plugin``, the
whole plugin, is the example of docs/writing-a-plugin.md, "Your library already speaks the
Array API").  Importing it imports nothing of JAX."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
