#!/usr/bin/env bash
# Fetches the ONNX 1.17 backend test data (Debian trixie's libonnx-testdata 1.17) into a cache
# outside the repository, without installing it and without touching the machine's apt
# sources: a private sources list (trixie, on the mirror the machine's own sources name) and
# private apt state, then `apt-get download` and `dpkg -x`.
#
# Usage: tools/fetch-onnx-testdata.sh [CACHE_DIR]
#   CACHE_DIR defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/recur/onnx-testdata-1.17.
# Prints the data folder (CACHE_DIR/usr/share/libonnx-testdata/data) on success. When the
# archive cannot be reached it says so in one line and exits 0: the 1.17 suites are skipped.
set -uo pipefail
version=1.17
cache="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/recur/onnx-testdata-$version}"
data="$cache/usr/share/libonnx-testdata/data"
if [[ -d "$data/node" ]]; then
  echo "$data"
  exit 0
fi

# The mirror of the machine's own Debian sources: deb822 "URIs:" lines, else one-line "deb URL".
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f "$f" ]] || continue
  mirror=$(awk '/^URIs:/ {print $2}' "$f" | grep -v security | head -1 || true)
  [[ -n "$mirror" ]] && break
done
if [[ -z "$mirror" && -f /etc/apt/sources.list ]]; then
  mirror=$(awk '$1 == "deb" && $2 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list)
fi
if [[ -z "$mirror" ]]; then
  echo "onnx-testdata $version: no Debian mirror in the machine's apt sources; 1.17 suites skipped"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/parts" "$work/cache/archives/partial" "$work/dl"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [signed-by=$keyring] $mirror trixie main" >"$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
          -o "APT::Get::List-Cleanup=0" -o "APT::Sandbox::User=root" -qq)
if ! timeout 300 apt-get "${apt_opts[@]}" update >"$work/log" 2>&1; then
  echo "onnx-testdata $version: the Debian archive at $mirror cannot be reached; 1.17 suites skipped"
  exit 0
fi
if ! (cd "$work/dl" && timeout 300 apt-get "${apt_opts[@]}" download "libonnx-testdata=$version*") \
    >>"$work/log" 2>&1; then
  echo "onnx-testdata $version: libonnx-testdata $version could not be downloaded; 1.17 suites skipped"
  exit 0
fi
mkdir -p "$cache.tmp"
if ! dpkg -x "$work"/dl/libonnx-testdata_*.deb "$cache.tmp"; then
  rm -rf "$cache.tmp"
  echo "onnx-testdata $version: the package could not be unpacked; 1.17 suites skipped"
  exit 0
fi
rm -rf "$cache"
mv "$cache.tmp" "$cache"
echo "$data"
