#!/usr/bin/env python3
"""Plots peerreduce-bench CSV files: time and busbw against message size, peerreduce beside NCCL.

Writes one SVG with two panels (time in us on a log scale; busbw in GB/s), one line per library and
placement (out of place, in place) of every CSV given. Standard library only, so it runs wherever the
benchmark's CSV files are, with nothing to install.

    bench/plot_bench.py --csv out.csv [--csv more.csv] --out plot.svg [--title "4 x H200, fp32"]

Exit status: 0 written; 2 bad input (a missing file, a CSV without the benchmark's columns, no rows).
"""
import argparse
import csv
import math
import sys
from xml.sax.saxutils import escape

COLUMNS = ("library", "ranks", "dtype", "bytes", "in_place", "best_us", "busbw_gbps")
WIDTH, HEIGHT = 980, 440
PANEL_W, PANEL_H = 400, 300
MARGIN_L, MARGIN_T = 70, 50
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f"]


class BadInput(Exception):
    pass


def read_rows(paths):
    rows = []
    for path in paths:
        try:
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
                if missing:
                    raise BadInput(f"{path}: not a peerreduce-bench CSV (missing columns: {', '.join(missing)})")
                for line, row in enumerate(reader, start=2):
                    try:
                        rows.append({
                            "series": f"{row['library']} {'in place' if row['in_place'] == '1' else 'out of place'}"
                                      f" ({row['ranks']} ranks, {row['dtype']})",
                            "bytes": int(row["bytes"]),
                            "us": float(row["best_us"]),
                            "busbw": float(row["busbw_gbps"]),
                        })
                    except ValueError as e:
                        raise BadInput(f"{path}:{line}: {e}") from None
        except OSError as e:
            raise BadInput(f"{path}: {e.strerror}") from None
    if not rows:
        raise BadInput("no benchmark rows in " + ", ".join(paths))
    for r in rows:
        if r["bytes"] <= 0 or r["us"] <= 0 or r["busbw"] < 0:
            raise BadInput(f"a row of {r['series']} has a non-positive size or time")
    return rows


def size_label(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b // scale} {unit}" if b % scale == 0 else f"{b / scale:.1f} {unit}"
    return f"{b} B"


def panel(out, x0, title, ylabel, series, value, log_y):
    """Draws one panel at x offset x0; `value` picks the y of a row."""
    xs = [r["bytes"] for rs in series.values() for r in rs]
    ys = [value(r) for rs in series.values() for r in rs]
    lx_min, lx_max = math.log2(min(xs)), math.log2(max(xs))
    if lx_max == lx_min:
        lx_max += 1
    if log_y:
        ly_min = math.floor(math.log10(min(y for y in ys if y > 0)))
        ly_max = math.ceil(math.log10(max(ys)))
        if ly_max == ly_min:
            ly_max += 1
    else:
        y_top = max(ys) * 1.1 or 1.0

    def px(b):
        return x0 + (math.log2(b) - lx_min) / (lx_max - lx_min) * PANEL_W

    def py(y):
        if log_y:
            frac = (math.log10(max(y, 10 ** ly_min)) - ly_min) / (ly_max - ly_min)
        else:
            frac = y / y_top
        return MARGIN_T + PANEL_H - frac * PANEL_H

    out.append(f'<g class="panel"><text x="{x0 + PANEL_W / 2}" y="{MARGIN_T - 18}" text-anchor="middle" '
               f'font-size="15">{escape(title)}</text>')
    out.append(f'<rect x="{x0}" y="{MARGIN_T}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#444"/>')
    for b in sorted(set(xs)):
        out.append(f'<text x="{px(b):.1f}" y="{MARGIN_T + PANEL_H + 16}" text-anchor="middle" font-size="10">'
                   f'{escape(size_label(b))}</text>')
    ticks = [10 ** e for e in range(ly_min, ly_max + 1)] if log_y else [y_top * k / 5 for k in range(6)]
    for t in ticks:
        label = f"{t:g}" if log_y else f"{t:.0f}"
        out.append(f'<line x1="{x0}" x2="{x0 + PANEL_W}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{py(t) + 4:.1f}" text-anchor="end" font-size="10">{label}</text>')
    out.append(f'<text x="{x0 - 48}" y="{MARGIN_T + PANEL_H / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 {x0 - 48} {MARGIN_T + PANEL_H / 2})">{escape(ylabel)}</text>')
    for i, (name, rs) in enumerate(series.items()):
        points = " ".join(f"{px(r['bytes']):.1f},{py(value(r)):.1f}" for r in sorted(rs, key=lambda r: r["bytes"]))
        color = COLORS[i % len(COLORS)]
        out.append(f'<polyline class="series" data-series="{escape(name)}" fill="none" stroke="{color}" '
                   f'stroke-width="2" points="{points}"/>')
    out.append("</g>")


def render(rows, title):
    series = {}
    for r in rows:
        series.setdefault(r["series"], []).append(r)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="sans-serif">', f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>']
    if title:
        out.append(f'<text x="{WIDTH / 2}" y="18" text-anchor="middle" font-size="16">{escape(title)}</text>')
    panel(out, MARGIN_L, "time (best replay)", "us", series, lambda r: r["us"], True)
    panel(out, MARGIN_L + PANEL_W + 90, "bus bandwidth", "GB/s", series, lambda r: r["busbw"], False)
    for i, name in enumerate(series):  # the legend: two entries per line under the panels
        x = MARGIN_L + (i % 2) * 430
        y = MARGIN_T + PANEL_H + 36 + (i // 2) * 16
        out.append(f'<line x1="{x}" x2="{x + 24}" y1="{y - 4}" y2="{y - 4}" stroke="{COLORS[i % len(COLORS)]}" '
                   f'stroke-width="3"/><text x="{x + 30}" y="{y}" font-size="12">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", action="append", required=True, help="a peerreduce-bench --csv file (repeatable)")
    parser.add_argument("--out", required=True, help="the SVG to write")
    parser.add_argument("--title", default="")
    args = parser.parse_args(argv)
    try:
        rows = read_rows(args.csv)
    except BadInput as e:
        print(f"plot_bench: {e}", file=sys.stderr)
        return 2
    with open(args.out, "w") as f:
        f.write(render(rows, args.title))
    print(f"plot_bench: {len(rows)} rows in {len({r['series'] for r in rows})} series -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
