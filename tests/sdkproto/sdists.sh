#!/usr/bin/env bash
# The official Agent SDKs' source distributions from PyPI, for their own examples/
# (tests/sdkproto/test_official_examples.py): the versions installed in PYTHON's environment,
# downloaded once into the test cache (nothing is copied into the checkout).
set -euo pipefail
python="${PYTHON:-python3}"
root="${LOOPWRIGHT_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopwright-tests}/sdists"
mkdir -p "$root"
for dist in claude-agent-sdk openai-agents; do
  version="$("$python" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$dist" 2>/dev/null)" \
    || { echo "$dist is not installed: its examples are not fetched" >&2; continue; }
  file="$root/${dist//-/_}-$version.tar.gz"
  [ -f "$file" ] && continue
  "$python" -m pip download -q --no-deps --no-binary :all: -d "$root" "$dist==$version"
done
ls "$root"
