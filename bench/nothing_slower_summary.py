"""Summary of bench/nothing-slower.sh's log: per case, the median ms of the old
and the new compiler over the rounds, new/old, and the cases slower by over 2%."""
import re
import statistics
import sys
from collections import defaultdict

times = defaultdict(lambda: {"old": [], "new": []})
for line in open(sys.argv[1]):
    m = re.match(r"(old|new) r\d+ (.*?) :: BENCH tilec (\S+) .*? ([0-9.]+) ms", line)
    if m:
        times[(m.group(2), m.group(3))][m.group(1)].append(float(m.group(4)))
slower = []
print(f"{'case':70s} {'old ms':>9s} {'new ms':>9s} {'new/old':>8s}")
for (case, name), t in times.items():
    if not t["old"] or not t["new"]:
        print(f"{case + ' ' + name:70s} {'-' if not t['old'] else statistics.median(t['old']):>9} "
              f"{'-' if not t['new'] else statistics.median(t['new']):>9}   (one side missing)")
        continue
    o, n = statistics.median(t["old"]), statistics.median(t["new"])
    print(f"{case + ' ' + name:70s} {o:9.4f} {n:9.4f} {n / o:8.3f}")
    if n > 1.02 * o:
        slower.append(case + " " + name)
print("slower by over 2%:", ", ".join(slower) if slower else "none")
