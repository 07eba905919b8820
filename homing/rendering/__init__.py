"""Templates rendered safely (docs/templates.md): a Jinja2 immutable sandbox with strict
undefined, run in a small pool of separate worker processes that a runaway render
cannot outlive (each request has a deadline; past it the process is killed and
replaced), with a memory limit in each worker and bounds on source and output sizes."""

from homing.rendering.kernel import (
    Limits,
    TemplateError,
    check_layout,
    check_parts,
    check_schema,
)
from homing.rendering.pool import RenderPool

__all__ = ["Limits", "RenderPool", "TemplateError", "check_layout", "check_parts", "check_schema"]
