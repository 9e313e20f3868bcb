"""Prism's builtin plugins.  They are registered through the same hooks as third-party ones."""
