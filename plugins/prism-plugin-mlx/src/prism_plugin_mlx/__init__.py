"""Prism plugin for Apple's MLX: ``mlx.core`` as a Prism backend (``.plugin``, the whole of it)."""

__version__ = "0.1.0"
