"""The SDK builds as an sdist and a wheel that ``twine check --strict`` accepts, and the
wheel carries the generated models, both clients' packages and the ``py.typed``
marker."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "python"


def test_the_sdk_builds_as_sdist_and_wheel_that_twine_accepts(tmp_path: Path) -> None:
    # A copy, so that the build's own folders never land in the repository.
    source = tmp_path / "source"
    shutil.copytree(SDK, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    out = tmp_path / "dist"
    # --no-isolation: the pinned setuptools of this environment, nothing downloaded.
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    built = sorted(p.name for p in out.iterdir())
    assert built == ["homing_client-0.1.0-py3-none-any.whl", "homing_client-0.1.0.tar.gz"]
    twine = Path(sys.executable).with_name("twine")
    checked = subprocess.run(
        [str(twine), "check", "--strict", *map(str, out.iterdir())],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with zipfile.ZipFile(out / built[0]) as wheel:
        names = set(wheel.namelist())
    assert {
        "homing_client/models.py",
        "homing_client/py.typed",
        "homing_client/_async/client.py",
        "homing_client/_sync/client.py",
    } <= names
