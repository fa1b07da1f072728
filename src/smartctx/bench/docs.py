"""Writing a benchmark's section of ``docs/benchmarks.md`` (between its markers), with the
command that produced it and the machine it ran on (STYLE.md habit 12)."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path


def machine_info() -> dict[str, str]:
    """CPU count, CPU model name (from /proc/cpuinfo when available) and Python version."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpus": str(os.cpu_count() or 1),
        "cpu_model": model,
        "python": platform.python_version(),
    }


def machine_line() -> str:
    """One Markdown line naming the machine."""
    info = machine_info()
    return f"Machine: {info['cpus']} CPUs, {info['cpu_model']}, Python {info['python']}."


def write_section(name: str, body: str, path: Path = Path("docs/benchmarks.md")) -> Path:
    """Replace the text between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->`` in ``path``.

    Only that section changes; if the markers are missing they are appended at the end of the
    file (which is created if needed). Returns ``path``.
    """
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body.strip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _m: block, text, count=1)
    else:
        text = text.rstrip("\n") + f"\n\n{block}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
