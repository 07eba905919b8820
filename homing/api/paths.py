"""The path a request is routed on, for middleware that guards by path.

``scope["path"]`` includes ``root_path`` (ASGI): an app mounted under ``/x`` sees
``/x/admin/v1/…``, while Starlette routes it as ``/admin/v1/…``. A guard comparing the
raw path would wave such a request through to the route it was meant to guard, so
every path check in a middleware goes through ``routed_path``, which strips the root
path exactly as Starlette's router does.
"""

from __future__ import annotations

from starlette.types import Scope

__all__ = ["routed_path"]


def routed_path(scope: Scope) -> str:
    """``scope["path"]`` without ``scope["root_path"]``, as Starlette's router sees it."""
    path = str(scope["path"])
    root = str(scope.get("root_path", ""))
    if not root or not path.startswith(root):
        return path
    if path == root:
        return ""
    return path[len(root) :] if path[len(root)] == "/" else path
