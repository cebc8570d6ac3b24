#!/usr/bin/env bash
# Install the peer tools of the benchmark: frontrun into the project venv, and
# interleave-test / ploom into their own venvs (they need Python 3.12 / 3.13).
# PY312 and PY313 name the interpreters (default: pyenv's 3.12.1 and 3.13.0).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peers="${DNSSE_PEERS_DIR:-$HOME/.cache/dnsse-peers}"
py312="${PY312:-$HOME/.pyenv/versions/3.12.1/bin/python}"
py313="${PY313:-$HOME/.pyenv/versions/3.13.0/bin/python}"
"$root/.venv/bin/pip" install --quiet -r "$root/benchmarks/requirements-peers.txt"
"$py312" -m venv "$peers/py312" && "$peers/py312/bin/pip" install --quiet interleave-test
"$py313" -m venv "$peers/py313" && "$peers/py313/bin/pip" install --quiet ploom
echo "peers installed under $peers"
