#!/usr/bin/env bash
# Build llama-cpp-python portably (no -march=native, no AMX) into a wheel cache keyed by version and flags;
# prints the wheel path. The logic is `react-agent setup-local --wheel-only` (react_agent/cli/_setup.py),
# which runs as a plain script, so this works before react-agent's dependencies are installed.
set -euo pipefail
PY="${PYTHON:-python3}"
exec "$PY" "$(dirname "$0")/../react_agent/cli/_setup.py" --wheel-only --python "$PY"
