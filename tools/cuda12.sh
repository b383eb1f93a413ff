#!/usr/bin/env bash
# The oldest-toolkit compile: every day's README one-liner built by CUDA 12.4's nvcc.
#
# Usage:
#   tools/cuda12.sh prepare   provide CUDA 12.4 in a throwaway Debian trixie root (root only):
#                             `debootstrap --variant=minbase trixie`, then inside it
#                             `apt-get install --no-install-recommends nvidia-cuda-toolkit` from
#                             main contrib non-free (12.4.131, g++-13). 5.0 GB of disk, 87 s with
#                             a fast mirror (2026-12-05; it prints both when done); a
#                             prepared root is reused and costs nothing.
#   tools/cuda12.sh check     compile each code/day*/ README build line, as written, with that nvcc
#                             for sm_75 and for sm_90, then once more for sm_90 with
#                             `-Xcompiler -Wall,-Wextra`, and the day's test program
#                             (tests/harness/<day>.cu, which the README tells a learner to build
#                             the same way) for sm_75. Any compiler output (a warning included)
#                             or a non-zero exit fails (exit 1). Exit 77 (CTest: skipped) with the
#                             reason and the command that prepares it when the root is not there.
#   tools/cuda12.sh --help    this text. Anything else is bad usage: one line on stderr, exit 2.
#
# The root lives outside the tree, in $REDUCTION_CUDA12_ROOT (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/reduction-module-cuda12.4; as root, /root/.cache/...): remove
# it with `sudo rm -rf` of that directory, nothing else holds it. The system's own toolkit is never
# touched. The Debian mirror is the one this machine's apt already uses (override:
# REDUCTION_DEBIAN_MIRROR). `prepare` exits 0 with a loud warning when a download is impossible
# (the check then skips) and 1 when something else is wrong.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=${REDUCTION_CUDA12_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/reduction-module-cuda12.4}
stamp=$root/.reduction-module-ready

skip_download() { # a download failed: warn loudly, leave the root unprepared, do not fail
  printf '\n*** WARNING: tools/cuda12.sh prepare: %s\n*** The CUDA 12.4 compile test (label compat) will SKIP.\n\n' "$*" >&2
  exit 0
}

mirror() { # the Debian mirror this machine's apt uses: deb822 'URIs:' or one-line 'deb URL'
  if [ -n "${REDUCTION_DEBIAN_MIRROR:-}" ]; then echo "$REDUCTION_DEBIAN_MIRROR"; return; fi
  cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
    awk '$1 == "URIs:" { for (i = 2; i <= NF; i++) print $i } $1 == "deb" { print ($2 ~ /^\[/ ? $3 : $2) }' |
    grep -E '/debian/?$' | head -n 1 || true
}

prepare() {
  if [ -f "$stamp" ]; then
    echo "cuda12: $root is prepared: $(chroot "$root" nvcc --version | tail -n 1)"
    return
  fi
  [ "$(id -u)" -eq 0 ] || { echo "cuda12: prepare needs root (debootstrap, chroot)" >&2; exit 1; }
  if ! command -v debootstrap >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || skip_download "no debootstrap and no apt-get to install it"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends debootstrap >/dev/null; } || skip_download "could not install debootstrap"
  fi
  local url; url=$(mirror)
  [ -n "$url" ] || skip_download "no Debian mirror in /etc/apt (set REDUCTION_DEBIAN_MIRROR)"
  local t0=$SECONDS tmp=$root.partial
  rm -rf "$tmp"; mkdir -p "$(dirname "$root")"
  echo "cuda12: debootstrap --variant=minbase trixie into $tmp"
  debootstrap --variant=minbase --components=main,contrib,non-free trixie "$tmp" "$url" \
    >"$tmp.log" 2>&1 || { tail -n 5 "$tmp.log" >&2; rm -rf "$tmp"; skip_download "debootstrap failed (log above)"; }
  echo "deb $url trixie main contrib non-free" >"$tmp/etc/apt/sources.list"
  echo "cuda12: apt-get install --no-install-recommends nvidia-cuda-toolkit (inside the root)"
  chroot "$tmp" /bin/sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends nvidia-cuda-toolkit && apt-get clean' >"$tmp.log" 2>&1 ||
    { tail -n 5 "$tmp.log" >&2; rm -rf "$tmp"; skip_download "apt-get install nvidia-cuda-toolkit failed (log above)"; }
  chroot "$tmp" nvcc --version | tail -n 2
  touch "$tmp/.reduction-module-ready"
  rm -rf "$root" "$tmp.log"; mv "$tmp" "$root"
  echo "cuda12: prepared $root in $((SECONDS - t0)) s ($(du -sh "$root" | cut -f1))"
}

check() {
  if [ ! -f "$stamp" ]; then
    echo "SKIPPED: no CUDA 12.4 root at $root; prepare it (root, 5.0 GB, a few minutes): sudo tools/cuda12.sh prepare"
    exit 77
  fi
  echo "cuda12: $(chroot "$root" nvcc --version | tail -n 1)"
  # The days' sources travel into the root (they include nothing of the repository's own).
  # A directory of this run's own inside the root: two checks at once must not share one.
  local work=/tmp/repo-$$
  trap "rm -rf '$root$work'" EXIT # expanded now: \$work is local to this function
  mkdir -p "$root$work/tests"; cp -r "$here/code" "$root$work/"; cp -r "$here/tests/harness" "$root$work/tests/"
  local fails=0 t0=$SECONDS readme line rel
  for readme in "$here"/code/day*/README.md; do
    rel=${readme#"$here"/}
    line=$(awk '/<!-- build-line -->/ { f = 1; next } f && /^ *nvcc / { sub(/^ */, ""); print; exit }' "$readme")
    [ -n "$line" ] || { echo "$rel:1: error: no nvcc line after <!-- build-line -->"; fails=$((fails + 1)); continue; }
    local day; day=$(basename "$(dirname "$readme")")
    for variant in sm_75 sm_90 sm_90-wall harness; do
      local cmd=${line//-arch=sm_[0-9][0-9]/-arch=${variant%-wall}}
      [ "$variant" = harness ] && cmd=$(sed -E "s# [^ ]+\.cu# tests/harness/$day.cu#; s#-arch=harness#-arch=sm_75#" <<<"$line")
      cmd=$(sed -E "s# -o [^ ]+# -o $work/a.out#" <<<"$cmd")
      [ "$variant" = sm_90-wall ] && cmd="$cmd -Xcompiler -Wall,-Wextra"
      local out rc=0
      out=$(chroot "$root" /bin/sh -c "cd $work && $cmd" 2>&1) || rc=$?
      if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
        echo "$rel: error: CUDA 12.4 ($variant) exit $rc: $cmd"; echo "$out"; fails=$((fails + 1))
      else
        echo "ok: $rel ($variant): $cmd"
      fi
    done
  done
  echo "cuda12: compiled in $((SECONDS - t0)) s; $fails failed"
  [ "$fails" -eq 0 ]
}

case "${1:-}:$#" in
  prepare:1) prepare ;;
  check:1) check ;;
  -h:1 | --help:1) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" ;;
  *) echo "error: tools/cuda12.sh: want one of prepare, check, --help; got '$*'" >&2; exit 2 ;;
esac
