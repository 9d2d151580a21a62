"""Running a child process and reading what it cost: wall time, CPU time, peak memory.

Stdlib only. CPU time and peak RSS come from the kernel's rusage of that one child
(`os.wait4`), which includes the children it waited for (so `cargo build` counts rustc).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, asdict


@dataclass
class Sample:
    wall_s: float
    cpu_s: float
    max_rss_kib: int
    returncode: int

    def as_dict(self) -> dict:
        return asdict(self)


class RunFailed(RuntimeError):
    pass


def run(cmd: list[str], *, cwd: str | None = None, ok_codes=(0,), env=None,
        stdout=subprocess.DEVNULL) -> Sample:
    """Runs `cmd`, its stdout to `stdout` (default /dev/null), and measures it.

    A return code outside `ok_codes` raises `RunFailed` with the command and its stderr.
    """
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=stdout, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in ok_codes:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-4000:]
            raise RunFailed(
                f"`{' '.join(cmd)}` (in {cwd or os.getcwd()}) exited with {proc.returncode}:\n{tail}")
    return Sample(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime,
                  max_rss_kib=usage.ru_maxrss, returncode=proc.returncode)


def median(values):
    return statistics.median(values) if values else float("nan")


def summarize(samples: list[Sample]) -> dict:
    return {
        "wall_s": median([s.wall_s for s in samples]),
        "cpu_s": median([s.cpu_s for s in samples]),
        "max_rss_kib": median([s.max_rss_kib for s in samples]),
        "wall_min_s": min(s.wall_s for s in samples),
        "wall_max_s": max(s.wall_s for s in samples),
        "runs": len(samples),
    }


def fmt_s(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.2f} s"


def fmt_mib(kib: float) -> str:
    return f"{kib / 1024:.0f} MiB"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def machine() -> dict:
    """nproc, CPU model and RAM, as BENCHMARKS.md reports them."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_kib = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_kib = int(line.split()[1])
                    break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_model": model,
        "ram_gib": round(mem_kib / 1024 / 1024, 1),
        "loadavg_at_start": [round(x, 2) for x in load],
    }
