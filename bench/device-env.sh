# Sourced by the bench/gpu-session*.sh scripts on the device machine, after
# .device/gpu-tests.sh has unpacked the binaries and libtilec into build/:
# the tools and the Python package's library from this checkout.
source .device/env.sh
export PATH=$PWD/build/bin:/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$PWD/build/lib:${LD_LIBRARY_PATH:-}
export TILEC_LIBRARY=$PWD/build/lib/libtilec.so TILEC_CACHE=0
