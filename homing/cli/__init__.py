"""``homing``: the command line (``homing.cli.parser``), then the command
(``homing.cli.commands``), imported only once the arguments are parsed: help, a
completion script and an argument error need none of Homing's services."""

from __future__ import annotations

from collections.abc import Sequence

from homing.cli import completion
from homing.cli.parser import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "completion":
        # Before the settings: a completion script needs no configuration or database.
        print(completion.bash_script(parser), end="")
        return 0
    from homing.cli.commands import run_command

    return run_command(args)


if __name__ == "__main__":
    raise SystemExit(main())
