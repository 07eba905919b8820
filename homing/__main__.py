"""``python -m homing`` is the ``homing`` command."""

from homing.cli import main

raise SystemExit(main())
