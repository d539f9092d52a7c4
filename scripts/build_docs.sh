#!/usr/bin/env bash
# Builds the documentation (docs/: the tour, the design and the API reference from the docstrings of
# elfpy and rlpytorch) into build/docs, with every Sphinx warning an error. Needs the project installed
# (scripts/setup.sh): autodoc imports the real modules.
set -euo pipefail
cd "$(dirname "$0")/.."
# The per-module pages are generated afresh, so a removed module leaves no stale page behind; -E rereads
# every source, since an incremental build would not repeat the warnings of unchanged pages.
rm -rf docs/_autosummary
python3 -m sphinx -b html -E -W --keep-going -q docs build/docs
echo "docs: build/docs/index.html"
