# Sourced by scripts/demo and scripts/test: make .venv (Python ≥ 3.11) and install vouched into it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY=""
for cand in python3.11 python3.12 python3.13 python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    PY="$cand"; break
  fi
done
if [ -z "$PY" ]; then
  echo "vouched needs Python 3.11 or newer (none found on PATH)" >&2; exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $PY"
  "$PY" -m venv .venv
fi
EXTRAS="${1:-}"
STAMP=".venv/.installed${EXTRAS:+-$EXTRAS}"
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
  echo "==> installing vouched${EXTRAS:+[$EXTRAS]} and its pinned dependencies into .venv"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${EXTRAS:+[$EXTRAS]}"
  touch "$STAMP"
fi
