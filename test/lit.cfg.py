# -*- Python -*-
# lit configuration for tilec: FileCheck tests for every stage, GoogleTest
# unit tests (test/unit), and GPU end-to-end tests gated by `cuda-device`.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "tilec"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".tile", ".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tilec_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "unit"]
config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%examples", os.path.join(config.tilec_src_root, "examples")))
config.substitutions.append(("%tilec_tools", config.tilec_tools_dir))

llvm_config.with_system_environment(["HOME", "TMPDIR", "TILEC_CUDA_DRIVER", "ASAN_OPTIONS", "UBSAN_OPTIONS"])
# Tests never touch the user's compile cache or tuning database.
config.environment["TILEC_CACHE_DIR"] = os.path.join(config.test_exec_root, "tilec-cache")
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.tilec_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["tilec", "tile-opt", "tilec-check", "embed_jit", "embed_c", "embed_aot"],
    [config.tilec_tools_dir])
config.substitutions.append(("%tilec_include", os.path.join(config.tilec_src_root, "runtime", "include")))
config.substitutions.append(("%tilec_runtime_lib", os.path.join(config.tilec_obj_root, "lib", "libtilec_runtime.a")))
cxx = shutil.which("clang++-22") or shutil.which("c++") or shutil.which("g++")
if cxx:
    config.available_features.add("cxx")
    # Programs linked against a sanitized runtime need the sanitizers too.
    flags = " -fsanitize=address,undefined" if config.tilec_sanitize in ("ON", "1", "TRUE") else ""
    config.substitutions.append(("%cxx", cxx + flags))

# ptxas assembles every PTX that a test emits; absent only where the CUDA
# toolkit is missing.
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    # Through scripts/ptxas-strict.sh: wgmma serialization warnings
    # (C7514/C7515/C7520) fail the test.
    strict = os.path.join(config.test_source_root, "..", "scripts", "ptxas-strict.sh")
    config.substitutions.append(("%ptxas", "bash " + os.path.abspath(strict) + " " + ptxas))


def has_gpu():
    for smi in (shutil.which("nvidia-smi"),):
        if smi:
            try:
                out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
                if out.returncode == 0 and "GPU" in out.stdout:
                    return True
            except Exception:
                pass
    return False


if has_gpu():
    config.available_features.add("cuda-device")
    # compute-sanitizer (memcheck, racecheck, synccheck) on the GPU machine.
    sanitizer = shutil.which("compute-sanitizer") or next(
        (p for p in ("/usr/local/cuda/bin/compute-sanitizer",
                     "/usr/local/cuda/compute-sanitizer/compute-sanitizer")
         if os.path.exists(p)), None)
    if sanitizer:
        config.available_features.add("compute-sanitizer")
        config.substitutions.append(
            ("%sanitizer", sanitizer + " --error-exitcode 1 --print-limit 20"))
