"""What the test files share: tilec imported from this checkout (or, with
TILEC_TEST_INSTALLED=1, the one installed, e.g. from the wheel), and the
paths of the examples."""
import os
import sys

if os.environ.get("TILEC_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import tilec  # noqa: E402,F401

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def example(name):
    return os.path.join(ROOT, "examples", name)
