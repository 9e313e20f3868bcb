"""Beyond one device: pipelines of stages, each on its own backend or device.

Layered, top to bottom (import-linter checks it): ``strategy`` > ``pipeline`` > ``planner`` >
``stage`` > ``placement``, ``split`` (a package, layered in its own right) > ``report``.
Nothing below imports this package: dispatch reads the few hooks it offers a pipeline
(``interception.PLANNING``, ``interception.LENIENT``, the move and fallback recordings) through
context variables, and ``prism_core`` exports the public names lazily.  The user guides are
docs/pipelines.md and docs/split.md; the layout is in docs/architecture.md.
"""
