#!/usr/bin/env bash
# Packs the built binaries, libLLVM (via ../shared/tools/device-bundle), lit
# and FileCheck into .device/ for the GPU machine, where
#   bash .device/gpu-tests.sh        runs the lit suite (GPU e2e included)
# Keep .device/ in .git/info/exclude. It builds first (a bundle of stale
# binaries measured the previous compiler once, session 43). With --slim it
# leaves out the unit tests, tilec-bench and lit's bytecode cache, which
# keeps .device under the 64 MiB a call carries beside a few old binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
slim=0
[ "${1:-}" = --slim ] && slim=1
ninja -C "$BUILD_DIR" > /dev/null
rm -rf .device
"${DEVICE_BUNDLE:-../shared/tools/device-bundle}" .device >/dev/null
mkdir -p .device/bin .device/unit
for b in tilec tile-opt tilec-check tilec-bench embed_jit embed_c embed_aot; do
  strip -o .device/bin/$b "$BUILD_DIR/bin/$b"
done
for t in TilecUnitTests TilecCAPITests; do
  strip -o .device/unit/$t "$BUILD_DIR/test/unit/$t"
done
strip -o .device/lib/libtilec.so "$BUILD_DIR/lib/libtilec.so"
cp "$BUILD_DIR/lib/libtilec_runtime.a" .device/lib/
xz -T0 -9 .device/bin/* .device/unit/* .device/lib/libtilec.so .device/lib/libtilec_runtime.a
for t in not count FileCheck split-file; do cp /usr/lib/llvm-22/bin/$t .device/bin/; done
cp -r /usr/lib/llvm-22/utils/lit .device/litpkg
cp "$BUILD_DIR/test/lit.site.cfg.py" .device/lit.site.cfg.py
cp "$BUILD_DIR/test/unit/lit.site.cfg.py" .device/unit.lit.site.cfg.py
src=$(realpath .)
cat > .device/gpu-tests.sh <<EOS
#!/usr/bin/env bash
# Runs the lit suite on the GPU machine from the development machine's build.
set -u
source .device/env.sh
mkdir -p build/bin build/test/unit build/lib
for f in .device/bin/*; do
  case \$f in *.xz) xz -dc "\$f" > build/bin/\$(basename "\$f" .xz);; *) cp "\$f" build/bin/;; esac
done
# .device/unit may be left out (to stay under the 64 MiB a call carries):
# the unit tests then do not run here (they run on every machine without a GPU).
units=
for f in .device/unit/*.xz; do
  [ -e "\$f" ] || continue
  xz -dc "\$f" > build/test/unit/\$(basename "\$f" .xz)
  chmod +x build/test/unit/\$(basename "\$f" .xz)
  units=build/test/unit
done
cp /tmp/tilec-llvm/libtilec.so /tmp/tilec-llvm/libtilec_runtime.a build/lib/
chmod +x build/bin/*
sed "s|$src|\$PWD|g; s|/usr/lib/llvm-22/bin|\$PWD/build/bin|g" .device/lit.site.cfg.py > build/test/lit.site.cfg.py
sed "s|$src|\$PWD|g" .device/unit.lit.site.cfg.py > build/test/unit/lit.site.cfg.py
export PATH=\$PWD/build/bin:/usr/local/cuda/bin:\$PATH
export LD_LIBRARY_PATH=\$PWD/build/lib:\$LD_LIBRARY_PATH
python3 -c "import sys; sys.path.insert(0, '.device/litpkg'); from lit.main import main; main()" -sv \${LIT_OPTS:-} build/test \$units
EOS
if [ $slim = 1 ]; then
  rm -rf .device/unit .device/litpkg/lit/__pycache__ .device/bin/tilec-bench.xz
fi
du -sh .device
