#!/usr/bin/env bash
# Fetches a newer ONNX backend test data package than the machine's (Debian's libonnx-testdata)
# into a cache outside the repository, without installing it and without touching the
# machine's apt sources: a private sources list (on the mirror the machine's own sources name)
# and private apt state, then `apt-get download` and `dpkg -x`.
#   1.17 (opsets up to 22): Debian 13 trixie, stable.
#   1.20 (opsets up to 25): Debian forky, testing (or sid, where forky has moved on).
#
# Usage: tools/fetch-onnx-testdata.sh [1.17|1.20] [CACHE_DIR]
#   CACHE_DIR defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/recur/onnx-testdata-VERSION.
# Prints the data folder (CACHE_DIR/usr/share/libonnx-testdata/data) on success. When the
# archive cannot be reached it says so in one line and exits 0: those suites are skipped.
set -uo pipefail
version="${1:-1.17}"
case "$version" in
  1.17) suites=(trixie) ;;
  1.20) suites=(forky sid) ;;
  *) echo "fetch-onnx-testdata.sh: unknown version '$version' (1.17 or 1.20)" >&2; exit 2 ;;
esac
cache="${2:-${XDG_CACHE_HOME:-$HOME/.cache}/recur/onnx-testdata-$version}"
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
  echo "onnx-testdata $version: no Debian mirror in the machine's apt sources; $version suites skipped"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
got=""
for suite in "${suites[@]}"; do
  rm -rf "$work/lists" "$work/cache" "$work/dl"
  mkdir -p "$work/lists/partial" "$work/parts" "$work/cache/archives/partial" "$work/dl"
  echo "deb [signed-by=$keyring] $mirror $suite main" >"$work/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
            -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
            -o "APT::Get::List-Cleanup=0" -o "APT::Sandbox::User=root" -qq)
  if ! timeout 300 apt-get "${apt_opts[@]}" update >"$work/log" 2>&1; then
    echo "onnx-testdata $version: the Debian archive at $mirror cannot be reached; $version suites skipped"
    exit 0
  fi
  if (cd "$work/dl" && timeout 300 apt-get "${apt_opts[@]}" download "libonnx-testdata=$version*") \
      >>"$work/log" 2>&1; then
    got=$suite
    break
  fi
done
if [[ -z "$got" ]]; then
  echo "onnx-testdata $version: libonnx-testdata $version is not in ${suites[*]}; $version suites skipped"
  exit 0
fi
mkdir -p "$cache.tmp"
if ! dpkg -x "$work"/dl/libonnx-testdata_*.deb "$cache.tmp"; then
  rm -rf "$cache.tmp"
  echo "onnx-testdata $version: the package could not be unpacked; $version suites skipped"
  exit 0
fi
rm -rf "$cache"
mv "$cache.tmp" "$cache"
echo "$data"
