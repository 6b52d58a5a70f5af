"""The tests compile into a cache directory of their own (the cache is
configured from the environment at its first use), so that tilec.cache.clear
in a test does not touch the user's."""
import os
import tempfile

os.environ["TILEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilec-pytest-cache-")
