#!/usr/bin/env bash
# ptxas for the tests: runs the real ptxas (its path first), passes its
# messages on, and fails on wgmma serialization warnings (C7514, C7515,
# C7520, or any other "wgmma.mma_async instructions are serialized": ptxas
# silently serializes the wgmma pipeline when the code around it breaks its
# rules, which costs most of the kernel's speed).
set -u
real=$1; shift
err=$("$real" "$@" 2>&1 >/dev/null); rc=$?
[ -n "$err" ] && printf '%s\n' "$err" >&2
[ $rc -ne 0 ] && exit $rc
if printf '%s' "$err" | grep -qE 'C7514|C7515|C7520|instructions are serialized'; then
  codes=$(printf '%s' "$err" | grep -oE 'C75[0-9]+' | sort -u | tr '\n' ' ' | sed 's/ $//')
  echo "ptxas-strict: ptxas serialized wgmma${codes:+ ($codes)}: failing" >&2
  exit 1
fi
exit 0
