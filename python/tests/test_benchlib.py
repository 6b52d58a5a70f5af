"""bench/benchlib.py's interleaved timing loop: every implementation is timed
once per round, and the order rotates from round to round, so that none is
always timed first (right after the hottest peer)."""
import os
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import benchlib  # noqa: E402


def test_interleaved_rotates_the_order(monkeypatch):
    order = []
    monkeypatch.setattr(benchlib, "settle", lambda fns, seconds: None)
    monkeypatch.setattr(benchlib, "median_ms", lambda f, iters, reps=1: f())
    impls = {name: (lambda name=name: order.append(name) or float(len(order)))
             for name in "abc"}
    times = benchlib.interleaved(impls, rounds=4, iters=1)
    assert "".join(order) == "abc" "bca" "cab" "abc"
    assert times == {"a": [1.0, 6.0, 8.0, 10.0], "b": [2.0, 4.0, 9.0, 11.0],
                     "c": [3.0, 5.0, 7.0, 12.0]}
