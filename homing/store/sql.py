"""Expressions that both databases run well."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import String, any_, bindparam
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement


def one_of(
    conn: AsyncConnection, column: ColumnElement[Any], values: Collection[str]
) -> ColumnElement[bool]:
    """``column IN values``. On PostgreSQL ``column = ANY(:array)``: one SQL text for any
    number of values, so one prepared statement serves them all (an IN list is a new
    statement, and a round trip to prepare it, for every length). SQLite prepares
    nothing and has no arrays: a plain IN list."""
    if conn.dialect.name == "postgresql":
        return column == any_(bindparam(None, sorted(values), type_=ARRAY(String), unique=True))
    return column.in_(sorted(values))
