#!/usr/bin/env bash
# The official Agent SDKs' source distributions from PyPI, for their own examples/ (and pydantic-ai's examples wheel)
# (tests/sdkproto/test_official_examples.py), downloaded once into the test cache (nothing is
# copied into the checkout). The version: the one installed in PYTHON's environment, else
# pyproject.toml's pin (claude-agent-sdk==...), else PyPI's newest (what `pip install -e .[dev]` takes).
set -euo pipefail
cd "$(dirname "$0")/../.."
python="${PYTHON:-python3}"
root="${LOOPWRIGHT_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopwright-tests}/sdists"
mkdir -p "$root"
for dist in claude-agent-sdk openai-agents; do
  if version="$("$python" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$dist" 2>/dev/null)"; then
    spec="$dist==$version"
  else
    spec="$(grep -o "\"$dist==[^\"]*\"" pyproject.toml | tr -d '"' || true)"
    spec="${spec:-$dist}"
  fi
  if [[ "$spec" == *==* ]] && [ -f "$root/${dist//-/_}-${spec#*==}.tar.gz" ]; then
    continue
  fi
  "$python" -m pip download -q --no-deps --no-binary :all: -d "$root" "$spec"
done
# pydantic-ai's examples come as a wheel of their own; 2.62.0 is the newest on PyPI (pydantic-ai-slim
# itself is ahead of it): the examples used run on the installed pydantic-ai all the same
[ -f "$root/pydantic_ai_examples-2.62.0-py3-none-any.whl" ] \
  || "$python" -m pip download -q --no-deps --only-binary :all: -d "$root" "pydantic-ai-examples==2.62.0"
ls "$root"
