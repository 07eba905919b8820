"""The query and path parameters several console pages share, bounded once here."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

__all__ = ["Cursor", "ProviderId", "Short", "TenantQuery"]

# The id of the last item of the previous page.
Cursor = Annotated[str | None, Query(max_length=36)]
# A provider account's id in a page's path.
ProviderId = Annotated[str, Path(min_length=1, max_length=36)]
# A short filter value (a status, an error class, a vendor's name).
Short = Annotated[str, Query(max_length=40)]
# A tenant's id in an operator's search.
TenantQuery = Annotated[str, Query(max_length=36)]
