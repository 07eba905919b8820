# Sourced by scripts/run and scripts/test: make a virtual environment match the pinned
# requirements. $1: requirements file (relative to the repo), $2: environment folder name.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/$2"
python="${HOMING_PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      python="$candidate"; break
    fi
  done
fi
[ -n "$python" ] || { echo "homing needs Python 3.11 or newer" >&2; exit 1; }
stamp_value="$(cat "$root/pyproject.toml" "$root"/requirements/*.txt | sha256sum | cut -c1-16)"
stamp="$venv/.homing-stamp"
if [ ! -x "$venv/bin/python" ]; then
  echo "creating $venv" >&2
  "$python" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$stamp_value" ]; then
  echo "installing pinned requirements from $1 into $2" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/$1"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$root"
  echo "$stamp_value" > "$stamp"
fi
