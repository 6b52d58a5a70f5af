# -*- Python -*-
# GoogleTest binaries under test/unit run as lit tests.
import os
import lit.formats

config.name = "tilec-unit"
config.suffixes = []
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = os.path.join(config.tilec_obj_root, "test", "unit")
config.test_exec_root = config.test_source_root
config.environment["TILEC_CACHE_DIR"] = os.path.join(config.test_exec_root, "tilec-cache")
for var in ("HOME", "TMPDIR", "TILEC_CUDA_DRIVER", "PATH", "LD_LIBRARY_PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
