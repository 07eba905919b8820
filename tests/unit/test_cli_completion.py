"""``homing completion bash`` completes every command, subcommand and option, as Bash
itself runs the script (issue #29: shell completion)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from homing.cli.completion import words
from homing.cli.parser import build_parser as _parser


def _script() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "homing", "completion", "bash"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOMING_DATABASE_URL": "not a url"},  # reads no settings
    )
    return done.stdout


def _complete(script: str, *typed: str) -> list[str]:
    """What Bash offers after ``typed`` (the last word is the one being completed)."""
    quoted = " ".join(f"'{word}'" for word in typed)
    probe = (
        f"{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(typed) - 1}; _homing; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.fixture(scope="module")
def script() -> str:
    return _script()


@pytest.mark.parametrize(
    ("typed", "offered"),
    [
        (("homing", "ten"), ["tenant"]),
        (("homing", "tenant", "s"), ["set-limits", "set-plan", "show", "suspend"]),
        (("homing", "run", "--d"), ["--demo"]),
        (("homing", "--help", "dl"), ["dlq"]),  # options before the command are skipped
        (("homing", "dlq", "redrive", "--dry-run", "--a"), ["--all"]),
        (("homing", "completion", ""), ["-h", "--help", "bash"]),
        (("homing", "nothing", ""), []),  # an unknown word completes nothing of its own
    ],
)
def test_bash_completes_what_may_follow(
    script: str, typed: tuple[str, ...], offered: list[str]
) -> None:
    got = _complete(script, *typed)
    if typed[1] == "nothing":
        assert set(got) <= set(words(_parser())["homing"])
    else:
        assert sorted(got) == sorted(offered)


def test_every_command_path_of_the_parser_is_in_the_script(script: str) -> None:
    def paths(parser: argparse.ArgumentParser, path: str) -> list[str]:
        found = [path]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    found += paths(child, f"{path} {name}")
        return found

    every = paths(_parser(), "homing")
    assert len(every) > 25
    for path in every:
        assert f"[{path}]=" in script or f"['{path}']=" in script, path
    assert "--supervised" not in script and "--joined" not in script, "hidden options stay hidden"
