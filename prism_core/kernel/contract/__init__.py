"""What a plugin hands Prism: its variants (:class:`~prism_core.extending.Variant`) and backends
(:class:`~prism_core.extending.Backend`), the types the hook specifications
(``prism_core.hookspecs``)
are written in."""
