"""Builds the weekly usage report from the request log."""

import csv
import logging
from collections import Counter
from pathlib import Path

logger = logging.getLogger(__name__)


def load_requests(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    print("loaded", len(rows), "requests from", path)
    return rows


def top_endpoints(rows: list[dict[str, str]], limit: int = 5) -> list[tuple[str, int]]:
    counts = Counter(row["endpoint"] for row in rows)
    return counts.most_common(limit)


def write_report(rows: list[dict[str, str]], out: Path) -> None:
    lines = [f"{endpoint}: {count}" for endpoint, count in top_endpoints(rows)]
    out.write_text("\n".join(lines) + "\n")
    print("wrote report to", out)


if __name__ == "__main__":
    requests = load_requests(Path("requests.csv"))
    write_report(requests, Path("report.txt"))
