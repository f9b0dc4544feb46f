#!/usr/bin/python3
"""pairs.py PAIRS OUTDIR FUSEBOX - run fusebox and SimPy on bench/v6/ alternately, whole processes.

A round runs fusebox, then SimPy keeping the same figures (v6_simpy.py with an
OUTDIR: fusebox's report.json and timeseries.csv figures for this model), then
SimPy counting only (requests, successes, attempts, mean latency: less than
fusebox computes). Each process's CPU time (user + system) comes from wait4's
rusage (microseconds), its peak RSS too. Prints the medians and the medians of
the pairwise ratios SimPy / fusebox, the same figures first; never judges them.
"""
import os
import statistics
import subprocess
import sys


def run(argv, out):
    with open(out, "w") as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{argv[0]} exited {p.returncode} (see {out})")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def main():
    pairs, out, fusebox = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    here = os.path.dirname(os.path.abspath(__file__))
    fb_cmd = [fusebox, "run", os.path.join(here, "v6.json"), "--no-charts", "-q", "--stats",
              "-o", os.path.join(out, "run")]
    py_cmd = [sys.executable, os.path.join(here, "v6_simpy.py"), "1200", "50", "1"]
    os.makedirs(os.path.join(out, "simpy"), exist_ok=True)
    py_full_cmd = py_cmd + [os.path.join(out, "simpy")]
    fb, py, py_min = [], [], []
    for _ in range(pairs):
        fb.append(run(fb_cmd, os.path.join(out, "fusebox.txt")))
        py.append(run(py_full_cmd, os.path.join(out, "simpy.txt")))
        py_min.append(run(py_cmd, os.path.join(out, "simpy-counts.txt")))
    with open(os.path.join(out, "fusebox.txt")) as f:
        print("  fusebox: " + f.read().strip().replace("stats: ", ""))
    with open(os.path.join(out, "simpy.txt")) as f:
        print("  " + f.read().strip())
    print(f"  CPU time, median of {pairs}: fusebox {statistics.median(x[0] for x in fb):.4f} s "
          f"(peak RSS {max(x[1] for x in fb):.0f} MiB), SimPy {statistics.median(x[0] for x in py):.3f} s "
          f"(peak RSS {max(x[1] for x in py):.0f} MiB), SimPy counting only "
          f"{statistics.median(x[0] for x in py_min):.3f} s")
    for name, runs in (("counting only", py_min), ("the same figures", py)):
        ratios = [p[0] / f[0] for f, p in zip(fb, runs)]
        print(f"  SimPy ({name}) / fusebox CPU time, pairwise: "
              + " ".join(f"{r:.0f}x" for r in ratios) + f"; median {statistics.median(ratios):.0f}x")


if __name__ == "__main__":
    main()
