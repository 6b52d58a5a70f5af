"""What the test files share: tilec imported from this checkout, and the
paths of the examples."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import tilec  # noqa: E402,F401

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def example(name):
    return os.path.join(ROOT, "examples", name)
