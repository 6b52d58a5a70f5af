# Sourced first by a bench/gpu-session*.sh script on the device machine:
#   source bench/session-start.sh "NAME MODES OUTDIR" "$@"
# sets mode and out (an absolute path) from the script's arguments (or stops
# with the usage), unpacks the binaries of .device (gpu-tests.sh without
# running a test), sources bench/device-env.sh (step, the paths) and prints
# the GPU's name, clocks and power.
usage=$1
shift
set -u
mode=${1:?usage: $usage}
out=${2:?usage: $usage}
mkdir -p "$out" && out=$(cd "$out" && pwd)
LIT_OPTS="--filter xyz_none" bash .device/gpu-tests.sh > /dev/null 2>&1
source bench/device-env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader
