"""``python -m homing`` (and the installed ``homing``) is the ``homing`` command.

This module imports nothing of Homing until the metrics' directory is settled:
prometheus-client chooses between one process's registry and its multiprocess mode when
it is first imported, so a command that starts other Homing processes (``homing run``,
``homing api``) must set ``PROMETHEUS_MULTIPROC_DIR`` before that import, here, for
itself and the children that inherit it (docs/architecture.md "Metrics").
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# Commands whose process may start other Homing processes and answers their scrapes.
_PARENTS = frozenset({"run", "api"})


def shared_metrics_dir(argv: Sequence[str]) -> str | None:
    """For ``run`` and ``api`` (not an API child, ``--joined``): a fresh private
    directory (mode 0700, empty) in ``PROMETHEUS_MULTIPROC_DIR``, removed when this
    process exits. Any value inherited from the environment is replaced, so one
    ``homing run`` never reads another's samples. None for every other command."""
    if not argv or argv[0] not in _PARENTS or "--joined" in argv:
        return None
    directory = tempfile.mkdtemp(prefix="homing-metrics-")
    os.environ[MULTIPROC_ENV] = directory
    atexit.register(shutil.rmtree, directory, True)
    return directory


def main() -> int:
    shared_metrics_dir(sys.argv[1:])
    from homing.cli import main as command

    return command()


if __name__ == "__main__":
    raise SystemExit(main())
