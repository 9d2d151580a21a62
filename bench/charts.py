#!/usr/bin/env python3
"""Draws the JSON results of one bench/run.sh as SVG charts next to them (what BENCHMARKS.md
shows): speed-up over the ast-grep CLI per pattern (cold, and warm when measured), peak
memory per pattern against the CLI's, the compile times against rmcp's, and time and memory
against workspace size when a scale run is present; for the broad patterns (broad.json),
their speed-up and the files parsed with and without the shape prefilter.

Usage: charts.py --dir RESULTS_DIR
Reads cli.json, compile.json and scale.json (whichever exist) and writes speedup.svg,
memory.svg, compile.svg and scale.svg there. Plain SVG written by hand: a few bar and line
charts do not justify adding matplotlib (and numpy) to the test bootstrap.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from html import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import load  # noqa: E402

WIDTH = 760
LEFT = 170  # room for the labels
RIGHT = 60
ROW = 26
TOP = 70
FONT = "font-family='system-ui, sans-serif' font-size='12'"
XCSH = "#2f6fdb"
WARM = "#7fb0ff"
CLI = "#9a9a9a"


def svg(height: int, title: str, body: list[str]) -> str:
    head = (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{height}' "
        f"viewBox='0 0 {WIDTH} {height}' {FONT}>"
        f"<rect width='100%' height='100%' fill='white'/>"
        f"<text x='{WIDTH / 2}' y='22' text-anchor='middle' font-size='15' font-weight='600'>"
        f"{escape(title)}</text>"
    )
    return head + "".join(body) + "</svg>\n"


def legend(items: list[tuple[str, str]], y: int) -> list[str]:
    out, x = [], LEFT
    for colour, text in items:
        out.append(f"<rect x='{x}' y='{y - 9}' width='12' height='12' fill='{colour}'/>")
        out.append(f"<text x='{x + 16}' y='{y + 1}'>{escape(text)}</text>")
        x += 24 + 7 * len(text)
    return out


def bar_chart(rows: list[tuple[str, list[tuple[float, str]]]], lines: list[tuple[float, str]],
         title: str, unit: str, note: str, log: bool = True) -> str:
    """Horizontal bars, on a log scale from 0.5 (speed-ups) or a linear one from 0: each row
    one or more (value, colour) bars; `lines` are vertical reference lines (value, label)."""
    values = [v for _, bars in rows for v, _ in bars] + [v for v, _ in lines] + [1.0]
    lo, hi = (0.5, max(values) * 1.4) if log else (0.0, max(values) * 1.15)
    plot = WIDTH - LEFT - RIGHT

    def x(v: float) -> float:
        if not log:
            return LEFT + plot * v / hi
        span = math.log10(hi) - math.log10(lo)
        return LEFT + plot * (math.log10(max(v, lo)) - math.log10(lo)) / span

    per = max(len(bars) for _, bars in rows) if rows else 1
    row_h = ROW if per == 1 else 14 * per + 8
    height = TOP + row_h * len(rows) + 60
    body: list[str] = []
    bottom = TOP + row_h * len(rows)
    if log:
        ticks, tick = [], 1.0
        while tick <= hi:
            ticks += [t for t in (tick, 2 * tick, 5 * tick) if lo <= t <= hi]
            tick *= 10
    else:
        step = 10 ** math.floor(math.log10(hi / 2)) if hi > 0 else 1
        step *= 2 if hi / step > 8 else 1
        ticks = [i * step for i in range(int(hi / step) + 1)]
    for t in ticks:
        body.append(f"<line x1='{x(t):.1f}' y1='{TOP - 6}' x2='{x(t):.1f}' y2='{bottom}' "
                    f"stroke='#eee'/>")
        body.append(f"<text x='{x(t):.1f}' y='{bottom + 16}' text-anchor='middle' "
                    f"fill='#666'>{t:g}{unit}</text>")
    for k, (value, label) in enumerate(lines):
        y = TOP - 8 - 14 * k
        body.append(f"<line x1='{x(value):.1f}' y1='{y + 2}' x2='{x(value):.1f}' "
                    f"y2='{bottom}' stroke='#d33' stroke-dasharray='4 3'/>")
        body.append(f"<text x='{x(value) + 3:.1f}' y='{y}' fill='#d33'>"
                    f"{escape(label)}</text>")
    for i, (name, bars) in enumerate(rows):
        y0 = TOP + i * row_h + 4
        body.append(f"<text x='{LEFT - 8}' y='{y0 + row_h / 2}' text-anchor='end'>"
                    f"{escape(name)}</text>")
        for j, (value, colour) in enumerate(bars):
            h = (row_h - 8) / len(bars)
            y = y0 + j * h
            body.append(f"<rect x='{LEFT}' y='{y:.1f}' width='{x(value) - LEFT:.1f}' "
                        f"height='{h - 2:.1f}' fill='{colour}'/>")
            body.append(f"<text x='{x(value) + 4:.1f}' y='{y + h / 2 + 3:.1f}'>"
                        f"{value:.2f}{unit}</text>")
    for k, line in enumerate(note.split("\n")):
        body.append(f"<text x='{LEFT}' y='{bottom + 38 + 15 * k}' fill='#666'>"
                    f"{escape(line)}</text>")
    return svg(height + 15 * note.count("\n"), title, body)


def speedup(cli: dict) -> str:
    rows = []
    warm_seen = False
    for p in cli["patterns"]:
        bars = [(p["cli"]["wall_s"] / p["xcsh"]["wall_s"], XCSH)]
        if "warm" in p:
            warm_seen = True
            bars.append((p["cli"]["wall_s"] / p["warm"]["wall_s"], WARM))
        rows.append((p["name"], bars))
    s = cli["summary"]
    note = (f"median {s['median_speedup_wall']:.2f}x, worst {s['worst_speedup_wall']:.2f}x "
            f"({s['worst_pattern']}); wall time, medians of {cli['runs']} runs\n"
            f"{'identical trees after apply on every pattern' if s['all_identical'] else 'TREES DIFFER'}")
    chart = bar_chart(rows, [(8.0, "target median 8x"), (3.0, "target worst 3x")],
                     "ast_edit preview: speed-up over the ast-grep CLI", "x", note)
    if warm_seen:
        chart = chart.replace("</svg>", "".join(legend([(XCSH, "cold"), (WARM, "warm")],
                                                       TOP - 30)) + "</svg>")
    return chart


def memory(cli: dict) -> str:
    rows = [(p["name"], [(p["xcsh"]["max_rss_kib"] / 1024, XCSH),
                         (p["cli"]["max_rss_kib"] / 1024, CLI)]) for p in cli["patterns"]]
    note = f"peak RSS, medians of {cli['runs']} runs; worst ratio " \
           f"{cli['summary']['max_rss_ratio']:.2f}x the CLI's"
    chart = bar_chart(rows, [], "Peak memory per pattern (MiB)", "", note, log=False)
    return chart.replace("</svg>", "".join(legend([(XCSH, "xcsh"), (CLI, "ast-grep CLI")],
                                                  TOP - 30)) + "</svg>")


def compile_chart(comp: dict) -> str:
    rows = []
    for step, r in comp["results"].items():
        other = "rmcp" if "rmcp" in r else next(k for k in r if k not in ("xcsh", "samples")
                                                 and isinstance(r[k], dict))
        rows.append((f"cargo {step}", [(r["xcsh"]["wall_s"], XCSH), (r[other]["wall_s"], CLI)]))
    note = f"{comp['tools']} tools, medians of {comp['runs']} runs (seconds, wall)"
    chart = bar_chart(rows, [], f"Building {comp['tools']} tools: xcsh against rmcp", "s", note,
                 log=False)
    return chart.replace("</svg>", "".join(legend([(XCSH, "xcsh"), (CLI, "rmcp")],
                                                  TOP - 30)) + "</svg>")


def scale_chart(scale: dict) -> str:
    """Time and peak memory against the number of files, each relative to the smallest."""
    points = sorted(scale["points"], key=lambda p: p["files"])
    base = points[0]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, 260
    height = TOP + plot_h + 70
    xs = [p["files"] / base["files"] for p in points]
    series = [("time", XCSH, [p["wall_s"] / base["wall_s"] for p in points]),
              ("peak memory", CLI, [p["max_rss_kib"] / base["max_rss_kib"] for p in points])]
    top = max(max(xs), max(max(v) for _, _, v in series)) * 1.1

    def px(v: float) -> float:
        return LEFT + plot_w * v / top

    def py(v: float) -> float:
        return TOP + plot_h - plot_h * v / top

    body = [f"<line x1='{px(0)}' y1='{py(0)}' x2='{px(top)}' y2='{py(top)}' stroke='#d33' "
            f"stroke-dasharray='4 3'/>",
            f"<text x='{px(top) - 4}' y='{py(top) + 14}' text-anchor='end' fill='#d33'>"
            f"linear</text>"]
    for name, colour, values in series:
        path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(v):.1f}"
                        for i, (x, v) in enumerate(zip(xs, values)))
        body.append(f"<path d='{path}' fill='none' stroke='{colour}' stroke-width='2'/>")
        for x, v in zip(xs, values):
            body.append(f"<circle cx='{px(x):.1f}' cy='{py(v):.1f}' r='3' fill='{colour}'/>")
    body += legend([(XCSH, "time / time at 1x"), (CLI, "peak memory / peak at 1x")], TOP - 30)
    body.append(f"<text x='{LEFT}' y='{height - 30}' fill='#666'>workspace size / 1x "
                f"({base['files']} files)</text>")
    return svg(height, "Preview time and memory against workspace size", body)


def warm_chart(warm: dict) -> str:
    """Each pattern's warm preview as a share of its cold one, and of its first call in a
    server that keeps trees when measured (bench/warm_bench.py)."""
    rows = [(p["name"], [(100 * p["warm_over_cold"], WARM)]
             + ([(100 * p["warm_over_first"], XCSH)] if "warm_over_first" in p else []))
            for p in warm["patterns"]]
    peak = warm["peak_rss_kib"]
    first = warm.get("median_warm_over_first")
    of_first = f" (dark: of the first call, median {100 * first:.1f}%)" if first else ""
    note = (f"median {100 * warm['median_warm_over_cold']:.1f}% of cold{of_first}; one xcsh serve over MCP, "
            f"medians of {warm['runs']} runs; cache {warm['cache_mb']} MiB\n"
            f"peak RSS warm {peak['warm'] / 1024:.0f} MiB, cold {peak['cold'] / 1024:.0f} MiB; "
            f"an edit between two calls {'seen' if warm['edit_seen'] else 'NOT SEEN'}")
    return bar_chart(rows, [(15.0, "target median 15%")],
                     "Warm preview as a share of the cold one", "%", note)


def broad_speedup(broad: dict) -> str:
    rows = [(p["name"], [(p["cli"]["wall_s"] / p["xcsh"]["wall_s"], XCSH)])
            for p in broad["patterns"]]
    s = broad["summary"]
    note = (f"median {s['median_speedup_wall']:.2f}x, worst {s['worst_speedup_wall']:.2f}x "
            f"({s['worst_pattern']}); wall time, medians of {broad['runs']} runs\n"
            f"{'identical trees after apply on every pattern' if s['all_identical'] else 'TREES DIFFER'}")
    return bar_chart(rows, [(5.0, "target median 5x"), (2.0, "target worst 2x")],
                     "Broad patterns: preview speed-up over the ast-grep CLI", "x", note)


def parsed_chart(broad: dict) -> str:
    """Files parsed per broad pattern, without and with the shape prefilter."""
    rows = []
    for p in broad["patterns"]:
        e = p.get("engine") or {}
        if "filesParsedWithoutShape" not in e:
            continue
        rows.append((p["name"], [(float(e["filesParsedWithoutShape"]), CLI),
                                 (float(e["filesParsed"]), XCSH)]))
    scanned = next((p["engine"]["filesScanned"] for p in broad["patterns"] if p.get("engine")), 0)
    note = f"of {scanned:,} Rust files scanned; the word prefilter alone vs words and shape"
    chart = bar_chart(rows, [], "Files parsed per broad pattern", "", note, log=False)
    chart = chart.replace(".00<", "<")
    return chart.replace("</svg>", "".join(legend([(CLI, "words only"),
                                                   (XCSH, "words and shape")],
                                                  TOP - 30)) + "</svg>")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", required=True)
    args = ap.parse_args()
    written = []
    for name, source, draw in [("speedup.svg", "cli.json", speedup),
                               ("memory.svg", "cli.json", memory),
                               ("compile.svg", "compile.json", compile_chart),
                               ("scale.svg", "scale.json", scale_chart),
                               ("warm.svg", "warm.json", warm_chart),
                               ("broad.svg", "broad.json", broad_speedup),
                               ("parsed.svg", "broad.json", parsed_chart)]:
        data = load(args.dir, source)
        if data is None or (source in ("cli.json", "broad.json") and not data.get("patterns")):
            continue
        with open(os.path.join(args.dir, name), "w") as f:
            f.write(draw(data))
        written.append(name)
    print("charts: " + (", ".join(written) if written else "none (no results)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
