# -*- Python -*-
# GoogleTest binaries under test/unit run as lit tests.
import os
import lit.formats

config.name = "tilec-unit"
config.suffixes = []
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = os.path.join(config.tilec_obj_root, "test", "unit")
config.test_exec_root = config.test_source_root
