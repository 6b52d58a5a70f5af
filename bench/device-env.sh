# Sourced by the bench/gpu-session*.sh scripts on the device machine, after
# .device/gpu-tests.sh has unpacked the binaries and libtilec into build/:
# the tools, the Python package and its library from this checkout, and
# `step SECONDS NAME COMMAND...`, which runs COMMAND into $out/NAME.txt
# under a time limit (so that one hang cannot take the call) and prints
# its status and last line.
source .device/env.sh
export PATH=$PWD/build/bin:/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$PWD/build/lib:${LD_LIBRARY_PATH:-}
export TILEC_LIBRARY=$PWD/build/lib/libtilec.so TILEC_CACHE=0
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
step() {
  local t=$1 name=$2; shift 2
  timeout -k 5 "$t" "$@" > "$out/$name.txt" 2>&1
  echo "$name: rc=$? $(tail -n 1 "$out/$name.txt")"
}
