"""Which interpreters get the start-up warning of an unpatched ``email`` package
(CVE-2024-6923): Homing encodes its own header fields on every version, and says so
once when it serves on one without the fix (docs/deploy.md, "The Python it runs on")."""

from __future__ import annotations

import pytest

from homing.email_headers import email_package_patched


@pytest.mark.parametrize(
    ("version", "patched"),
    [
        ((3, 11, 7), False),
        ((3, 11, 9), False),
        ((3, 11, 10), True),
        ((3, 11, 14), True),
        ((3, 12, 1), False),
        ((3, 12, 5), True),
        ((3, 13, 0), True),
        ((3, 14, 2), True),
    ],
)
def test_the_first_fixed_patch_release_of_each_minor_version(
    version: tuple[int, int, int], patched: bool
) -> None:
    assert email_package_patched(version) is patched
