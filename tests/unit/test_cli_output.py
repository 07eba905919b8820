"""``--json`` on every command that prints data: JSON when asked for or when stdout is
not a terminal (what scripts read before the flag existed), text on a terminal."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pty

import pytest

from homing.cli import completion
from homing.cli.output import NO_OUTPUT, emit, human
from homing.cli.parser import build_parser as _parser


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[str, bool]:
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        return {" ".join(path): any("--json" in a.option_strings for a in parser._actions)}
    found: dict[str, bool] = {}
    for group in groups:
        for name, child in group.choices.items():
            found |= _leaves(child, (*path, name))
    return found


def test_every_command_that_prints_data_takes_json_and_no_other() -> None:
    leaves = _leaves(_parser())
    assert leaves["tenant list"] and leaves["dlq redrive"] and leaves["keys rotate"]
    without = sorted(name for name, has in leaves.items() if not has)
    assert without == sorted(NO_OUTPUT)


def test_the_completion_script_offers_json() -> None:
    script = completion.bash_script(_parser())
    assert "--json" in script


def test_a_page_reads_as_one_block_per_item_and_names_the_next_cursor() -> None:
    page = {"data": [{"id": "a", "rate": 1}, {"id": "b", "rate": None}], "next_cursor": "b"}
    assert human(page) == "id:   a\nrate: 1\n\nid:   b\nrate: -\n\nmore: --cursor b"
    assert human({"data": [], "next_cursor": None}) == "(none)"
    assert human({"limits": {"quotas": {"sms": 10}}}) == 'limits: {"quotas": {"sms": 10}}'


def test_piped_output_is_json_with_or_without_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in (False, True):
        emit(argparse.Namespace(json=flag), {"tenant_id": "t1", "api_key": None})
        assert json.loads(capsys.readouterr().out) == {"tenant_id": "t1", "api_key": None}


def _on_a_terminal(flag: bool, value: object) -> str:
    reader, writer = pty.openpty()
    try:
        with open(writer, "w", closefd=False) as term, contextlib.redirect_stdout(term):
            emit(argparse.Namespace(json=flag), value)
        return os.read(reader, 4096).decode().replace("\r\n", "\n")
    finally:
        os.close(reader)
        os.close(writer)


def test_a_terminal_gets_text_unless_json_is_asked_for() -> None:
    value = {"matched": 3, "redriven": 2}
    assert _on_a_terminal(False, value).rstrip() == "matched:  3\nredriven: 2"
    assert json.loads(_on_a_terminal(True, value)) == value
