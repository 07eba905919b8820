"""The query and path parameters several API routes share, bounded once here."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

__all__ = ["Cursor", "Limit", "TenantFilter", "VersionId"]

# How many items a page holds.
Limit = Annotated[int, Query(ge=1, le=200)]
# The id of the last item of the previous page.
Cursor = Annotated[str | None, Query(max_length=36)]
# An operator's search narrowed to one tenant.
TenantFilter = Annotated[str | None, Query(max_length=36)]
# A template's or layout's version.
VersionId = Annotated[str, Path(min_length=1, max_length=36)]
