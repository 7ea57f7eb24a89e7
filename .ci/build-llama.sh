#!/usr/bin/env bash
# Build llama-cpp-python portably (no -march=native, no AMX) into a wheel cache keyed by
# version and flags, so a wheel built with other flags is never reused; prints the wheel path.
set -euo pipefail
LLAMA_VERSION="${LLAMA_VERSION:-0.3.36}"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF"
PY="${PYTHON:-python3}"
key=$(printf '%s|%s|%s' "$LLAMA_VERSION" "$CMAKE_ARGS" "$("$PY" -c 'import sys;print(sys.version_info[:2])')" | sha256sum | cut -c1-16)
dir="${XDG_CACHE_HOME:-$HOME/.cache}/react-agent/llama-wheels/$key"
if ! ls "$dir"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  mkdir -p "$dir.tmp"
  echo "building llama-cpp-python $LLAMA_VERSION portably (about 7 minutes on 2 cores)..." >&2
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$PY" -m pip wheel --no-cache-dir --no-deps -q \
    "llama-cpp-python==$LLAMA_VERSION" -w "$dir.tmp" >&2
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
fi
ls "$dir"/llama_cpp_python-*.whl
