#!/usr/bin/env bash
# Installs recur from BUILD into a fresh prefix and builds the examples against that prefix
# alone, as a new user would: copied out of the source tree, found with find_package (and
# with pkg-config), then run on MODEL_DIR's model.
# Usage: install_and_build_examples.sh BUILD SOURCE MODEL_DIR
set -euo pipefail
build=$1 src=$2 model=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
echo "installed into $prefix:"
(cd "$prefix" && find . -type f -o -type l | sort)

# The examples outside the source tree, so that nothing but the prefix is reachable.
cp -r "$src/examples" "$tmp/examples"

# examples/cpp: find_package(recur) + recur::recur.
cmake -S "$tmp/examples/cpp" -B "$tmp/build-cpp" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON | grep -E "^-- recur"
cmake --build "$tmp/build-cpp" >/dev/null
if grep -q -- "$src" "$tmp/build-cpp/compile_commands.json"; then
  echo "the example's compile commands reach into the source tree $src" >&2
  exit 1
fi
"$tmp/build-cpp/recur_example" "$model/model.onnx"

# The same source with pkg-config instead of CMake. pkg-config gives no run path, so the
# program finds librecur.so through LD_LIBRARY_PATH.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "pkg-config: $(pkg-config --modversion recur): $(pkg-config --cflags --libs recur)"
# shellcheck disable=SC2046
c++ -std=c++17 "$tmp/examples/cpp/main.cc" -o "$tmp/recur_example_pc" \
  $(pkg-config --cflags --libs recur)
LD_LIBRARY_PATH="$prefix/lib" "$tmp/recur_example_pc" "$model/model.onnx" >/dev/null
echo "pkg-config build runs"

# examples/c: the C API's example (include/recur/recur_c.h), found the same way.
cmake -S "$tmp/examples/c" -B "$tmp/build-c" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$tmp/build-c" >/dev/null
if grep -q -- "$src" "$tmp/build-c/compile_commands.json"; then
  echo "the C example's compile commands reach into the source tree $src" >&2
  exit 1
fi
"$tmp/build-c/recur_c_example" "$model/model.onnx"

echo "examples built against $prefix and run on $model"
