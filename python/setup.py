"""The tilec wheel: the pure-Python package with libtilec.so inside it (LLVM
and MLIR linked in statically: a machine with an NVIDIA driver and no LLVM
runs it). Built by scripts/build-wheel.sh from a staging directory that
holds tilec/ and tilec/libtilec.so; not meant to be run from python/."""
from setuptools import setup

try:  # setuptools >= 70 has its own; before, the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel  # a clear ImportError without it


class _PlatformWheel(bdist_wheel):
    # Pure Python (any Python 3, ctypes) but with a native library: a
    # platform wheel that is not tied to one CPython ABI.
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return "py3", "none", "linux_x86_64"


commands = {"bdist_wheel": _PlatformWheel}

setup(name="tilec", version="0.1.0",
      description="tilec: a tile language compiler for NVIDIA GPUs (JIT from Python)",
      packages=["tilec"], package_data={"tilec": ["libtilec.so"]},
      python_requires=">=3.8", cmdclass=commands, zip_safe=False)
