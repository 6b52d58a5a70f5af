#!/usr/bin/env python3
"""Writes a copy of a .tile file with other tuning tables: for each
KERNEL=LOG, the kernel's `@tuned(...)` table (if it has one) is replaced by
the one `tilec tune --table` printed in LOG, or removed where LOG is "-" or
printed none ("TABLE KERNEL: no row ..."). The table goes right before the
kernel's `@tune(`. Prints each table it puts in.

usage: bench/tuned_table.py SRC OUT KERNEL=LOG...
  e.g. bench/tuned_table.py examples/matmul.tile /tmp/m.tile matmul=-   (the heuristic alone)
"""
import re
import sys


def logged_table(log):
    """The @tuned(...) lines of a tilec tune --table log ("" if none)."""
    if log == "-":
        return ""
    lines = open(log).read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("@tuned(")), None)
    if start is None:
        return ""
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith("))"))
    if end == start:  # a key and no rows (what --table printed before session 47)
        return ""
    return "\n".join(lines[start:end + 1]) + "\n"


def main():
    src = open(sys.argv[1]).read()
    for spec in sys.argv[3:]:
        kernel, log = spec.split("=", 1)
        at = re.search(rf"^kernel {re.escape(kernel)}<", src, re.M).start()
        before = src.rfind("\nkernel ", 0, at) + 1  # the previous kernel (or the file's start)
        tune = src.rindex("@tune(", before, at)
        old = src.find("@tuned(", before, tune)
        if old < 0:
            old = tune
        table = logged_table(log)
        print(f"{kernel}: " + (table or "no table\n"), end="")
        src = src[:old] + table + src[tune:]
    open(sys.argv[2], "w").write(src)


if __name__ == "__main__":
    main()
