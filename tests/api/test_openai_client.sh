#!/usr/bin/env bash
# OpenAI's official Python client against `serve` (tests/api/openai_client_check.py). The pinned `openai`
# package is installed once into a virtual environment in the build directory (PyPI), not into the system.
# Usage: test_openai_client.sh SOURCE_DIR CLI STARTER_MODEL_DIR VENV_DIR
set -euo pipefail
src="$1" cli="$2" model="$3" venv="$4"
if ! "$venv/bin/python" -c "import openai" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "openai==3.51.0"
fi
exec "$venv/bin/python" "$src/tests/api/openai_client_check.py" "$cli" "$model"
