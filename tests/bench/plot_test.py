#!/usr/bin/env python3
"""Checks bench/plot_bench.py: a plot of a benchmark CSV has both panels and one line per series with
one point per size; bad input is exit status 2 with a message naming the problem, and writes nothing."""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLOT = os.path.join(ROOT, "bench", "plot_bench.py")
HEADER = "library,algorithm,ranks,dtype,bytes,in_place,best_us,median_us,algbw_gbps,busbw_gbps,wrong\n"
SVG = "{http://www.w3.org/2000/svg}"


def run(args):
    return subprocess.run([sys.executable, PLOT] + args, capture_output=True, text=True, timeout=60)


def check(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "bench.csv")
        with open(data, "w") as f:
            f.write(HEADER)
            for size, us in ((4096, 5.0), (65536, 8.0), (1 << 20, 26.0)):
                for place in (0, 1):
                    f.write(f"peerreduce,one-shot,4,fp32,{size},{place},{us},{us},1.0,1.5,0\n")
                f.write(f"nccl,nccl,4,fp32,{size},0,{us * 2},{us * 2},0.5,0.75,0\n")
        out = os.path.join(tmp, "plot.svg")
        r = run(["--csv", data, "--out", out, "--title", "a & b"])
        check(r.returncode == 0, f"plot failed: {r.stderr}")
        root = ET.parse(out).getroot()
        panels = root.findall(f"{SVG}g[@class='panel']")
        check(len(panels) == 2, f"{len(panels)} panels, expected time and busbw")
        for p in panels:
            lines = p.findall(f"{SVG}polyline[@class='series']")
            names = sorted(l.get("data-series") for l in lines)
            check(names == ["nccl out of place (4 ranks, fp32)", "peerreduce in place (4 ranks, fp32)",
                            "peerreduce out of place (4 ranks, fp32)"], f"series {names}")
            for l in lines:
                check(len(l.get("points").split()) == 3, f"{l.get('data-series')}: not one point per size")
        # The time panel's nccl line lies above (larger y is lower): its times are twice peerreduce's.
        time_lines = {l.get("data-series"): l for l in panels[0].findall(f"{SVG}polyline")}
        nccl_y = [float(p.split(",")[1]) for p in time_lines["nccl out of place (4 ranks, fp32)"].get("points").split()]
        ours_y = [float(p.split(",")[1]) for p in time_lines["peerreduce out of place (4 ranks, fp32)"].get("points").split()]
        check(all(n < o for n, o in zip(nccl_y, ours_y)), "NCCL's longer times are not drawn higher")

        bad = os.path.join(tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("library,bytes\npeerreduce,4096\n")
        gone = os.path.join(tmp, "never.svg")
        r = run(["--csv", bad, "--out", gone])
        check(r.returncode == 2 and "missing columns" in r.stderr and "best_us" in r.stderr, f"bad columns: {r.stderr}")
        with open(bad, "w") as f:
            f.write(HEADER + "peerreduce,one-shot,4,fp32,4096,0,fast,1,1,1,0\n")
        r = run(["--csv", bad, "--out", gone])
        check(r.returncode == 2 and "bad.csv:2" in r.stderr, f"bad number: {r.stderr}")
        with open(bad, "w") as f:
            f.write(HEADER)
        r = run(["--csv", bad, "--out", gone])
        check(r.returncode == 2 and "no benchmark rows" in r.stderr, f"empty: {r.stderr}")
        r = run(["--csv", os.path.join(tmp, "absent.csv"), "--out", gone])
        check(r.returncode == 2 and "absent.csv" in r.stderr, f"missing file: {r.stderr}")
        check(not os.path.exists(gone), "bad input wrote a plot")
    print("plot_bench: all checks passed")


if __name__ == "__main__":
    main()
