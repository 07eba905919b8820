"""Why the database cannot write: its disk is full, read-only, or closed to Homing.

A database that answers reads but refuses writes is not "unavailable" in general: the
operator has to free space, remount, or fix ownership, and nothing improves by waiting.
These functions name that cause, from the driver's error (SQLite's result code,
PostgreSQL's SQLSTATE), from an ``OSError`` (Homing's own files in the data folder), or
from the SQLite file's folder as it is now (``/readyz``). Each cause is a
``StoreUnavailable`` subclass, so every caller that already handles "no database now"
(the 503, a worker's retry) handles it unchanged.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Callable
from pathlib import Path

from homing.errors import StorageFull, StoragePermissionDenied, StorageReadOnly, StoreUnavailable

__all__ = [
    "FULL_BELOW_BYTES",
    "StorageCause",
    "StorageWatch",
    "cause_of_oserror",
    "file_cause",
    "postgres_cause",
    "sqlite_cause",
]

StorageCause = type[StoreUnavailable]

log = logging.getLogger("homing.store")

# Less free space than this on the SQLite file's filesystem is "full" for /readyz:
# SQLite grows its write-ahead log by whole pages per commit, and a group of accepts
# takes several; below this the next writes are about to fail, if they do not already.
FULL_BELOW_BYTES = 1 << 20

# PostgreSQL's SQLSTATEs: disk_full, read_only_sql_transaction (a standby, or
# default_transaction_read_only), insufficient_privilege.
_POSTGRES = {"53100": StorageFull, "25006": StorageReadOnly, "42501": StoragePermissionDenied}
_ERRNO = {
    errno.ENOSPC: StorageFull,
    errno.EDQUOT: StorageFull,
    errno.EROFS: StorageReadOnly,
    errno.EACCES: StoragePermissionDenied,
    errno.EPERM: StoragePermissionDenied,
}
# SQLite result codes after which the file's folder tells why (a read-only mount and a
# folder Homing may not write both show as "unable to open" or "readonly").
_SQLITE_ASK_FOLDER = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_IOERR")


def postgres_cause(sqlstate: str) -> StorageCause | None:
    """The storage cause a PostgreSQL SQLSTATE names, if any."""
    return _POSTGRES.get(sqlstate)


def cause_of_oserror(exc: OSError) -> StorageCause | None:
    """The storage cause of an ``OSError`` on Homing's own files, if any."""
    return _ERRNO.get(exc.errno or 0)


def sqlite_cause(error: BaseException, file: Path) -> StorageCause | None:
    """The storage cause of a SQLite error on the database ``file``, if any: SQLITE_FULL
    is a full disk; "read-only", "cannot open" and I/O errors ask the file's folder."""
    name = str(getattr(error, "sqlite_errorname", ""))
    if name == "SQLITE_FULL":
        return StorageFull
    if not name.startswith(_SQLITE_ASK_FOLDER):
        return None
    cause = file_cause(file)
    if cause is None and name.startswith("SQLITE_READONLY"):
        return StorageReadOnly
    return cause


def file_cause(file: Path) -> StorageCause | None:
    """What keeps Homing from writing the SQLite database ``file`` now, or None: a
    read-only mount, no write permission on its folder, on it or on its ``-wal`` and
    ``-shm`` files, less than ``FULL_BELOW_BYTES`` free. A folder that does not exist
    yet asks its nearest parent."""
    folder = file.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        stats = os.statvfs(folder)
    except OSError as exc:
        return cause_of_oserror(exc)
    if stats.f_flag & os.ST_RDONLY:
        return StorageReadOnly
    beside = (file, _beside(file, "-wal"), _beside(file, "-shm"))
    files = [folder, *(path for path in beside if path.exists())]
    if not all(os.access(path, os.W_OK) for path in files):
        return StoragePermissionDenied
    if stats.f_bavail * stats.f_frsize < FULL_BELOW_BYTES:
        return StorageFull
    return None


def _beside(file: Path, suffix: str) -> Path:
    return file.with_name(file.name + suffix)


class StorageWatch:
    """The storage causes one database's writes met lately: each is logged as a
    warning (once per cause a minute, so a full disk under load is one line, not one a
    request) and remembered for ``REMEMBER_SECONDS``, so ``/readyz`` names a cause it
    cannot see from outside (PostgreSQL's disk) for a while after a write met it."""

    REMEMBER_SECONDS = 10.0
    WARN_EVERY_SECONDS = 60.0

    def __init__(self, dialect: str, file: Path | None, now: Callable[[], float]) -> None:
        self._dialect = dialect
        self._file = file
        self._now = now
        self._met: tuple[float, StorageCause] | None = None
        self._warned: dict[StorageCause, float] = {}

    def met(self, cause: StorageCause) -> None:
        """A write failed for ``cause``: remember it, and warn unless warned lately."""
        now = self._now()
        self._met = (now, cause)
        last = self._warned.get(cause)
        if last is None or now - last >= self.WARN_EVERY_SECONDS:
            self._warned[cause] = now
            where = {"folder": str(self._file.parent)} if self._file is not None else {}
            log.warning(
                f"the database cannot store anything: {cause.code}",
                extra={"cause": cause.code, "database": self._dialect, **where},
            )

    def recent(self) -> StorageCause | None:
        """The cause a write met in the last ``REMEMBER_SECONDS``, if any."""
        if self._met is None or self._now() - self._met[0] > self.REMEMBER_SECONDS:
            return None
        return self._met[1]

    def now(self) -> StorageCause | None:
        """What the SQLite file's folder shows now (``file_cause``), else a cause a
        write met lately."""
        seen = file_cause(self._file) if self._file is not None else None
        return seen or self.recent()
