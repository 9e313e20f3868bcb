"""What a plugin hands Prism: its variants (:class:`~prism_core.Variant`) and backends
(:class:`~prism_core.Backend`), the types the hook specifications (``prism_core.hookspecs``)
are written in."""
