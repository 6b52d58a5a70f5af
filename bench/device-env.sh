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
# Issue 15's twelve bf16 shapes (MxNxK), as bench_skinny.py --shapes takes them.
twelve=8192x8192x8192,6144x6144x6144,4096x4096x4096,2048x2048x2048,3000x3000x3000,1000x3000x777,4096x4096x512,8192x8192x1024,16x8192x8192,64x8192x8192,128x16384x4096,4096x16384x1024
