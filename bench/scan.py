"""Benchmark of ``loopfuse scan``'s reading path against the stdlib ``json`` module alone.

Generates about 1 GB (``--size-mb``) of Claude Code and Codex session logs in a temp
folder (deleted afterwards), then times (1) ``json.loads`` of every line of every file
and (2) loopfuse's detection + streaming readers + loop statistics over the same files.
Prints MB/s, calls/s and the ratio; the target is at least half the json parse speed.

    PYTHONPATH=src python bench/scan.py [--size-mb 1024]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from loopfuse.analysis.scanstats import scan_calls
from loopfuse.analysis.transcripts.base import ReadTally
from loopfuse.analysis.transcripts.detect import sources

FILE_MB = 32
TEXT = "The test still fails; let me look at the traceback again and read the module. " * 12


def claude_lines(session: int, n: int) -> list[str]:
    out, sid = [], f"00000000-0000-4000-8000-{session:012d}"
    for i in range(n):
        stamp = f"2025-11-30T11:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
        base = {
            "parentUuid": f"u{i - 1}",
            "isSidechain": False,
            "sessionId": sid,
            "uuid": f"u{i}",
            "timestamp": stamp,
        }
        kind = i % 4
        if kind == 0:
            msg = {"role": "assistant", "content": [{"type": "text", "text": TEXT}]}
        elif kind == 1:
            cmd = "pytest -q tests/test_app.py" if i % 40 < 20 else f"sed -n {i},{i + 40}p src/app.py"
            block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": cmd}}
            msg = {"role": "assistant", "content": [block]}
        elif kind == 2:
            result = {
                "type": "tool_result",
                "tool_use_id": f"toolu_{i - 1}",
                "content": TEXT,
                "is_error": False,
            }
            msg = {"role": "user", "content": [result]}
        else:
            msg = {"role": "user", "content": TEXT}
        row = {**base, "type": msg["role"], "message": msg}
        out.append(json.dumps(row, separators=(",", ":")))
    return out


def codex_lines(session: int, n: int) -> list[str]:
    meta = {"timestamp": "2025-12-08T00:37:46.102Z", "type": "session_meta", "payload": {"id": f"s{session}"}}
    out = [json.dumps(meta)]
    for i in range(n):
        stamp = "2025-12-08T00:38:00.000Z"
        p: dict[str, Any]
        if i % 3 == 0:
            args = json.dumps({"command": ["bash", "-lc", "cargo test" if i % 30 < 15 else f"cat f{i}.rs"]})
            p = {"type": "function_call", "name": "shell", "arguments": args, "call_id": f"c{i}"}
        elif i % 3 == 1:
            output = json.dumps({"output": TEXT, "metadata": {"exit_code": 101}})
            p = {"type": "function_call_output", "call_id": f"c{i - 1}", "output": output}
        else:
            p = {"type": "reasoning", "summary": [{"type": "summary_text", "text": TEXT}]}
        out.append(json.dumps({"timestamp": stamp, "type": "response_item", "payload": p}))
    return out


def generate(folder: Path, size_mb: int) -> int:
    written, index = 0, 0
    target = size_mb * 1024 * 1024
    while written < target:
        make = claude_lines if index % 2 == 0 else codex_lines
        block = "\n".join(make(index, 2000)) + "\n"
        path = folder / (f"s{index}.jsonl" if index % 2 == 0 else f"rollout-{index}.jsonl")
        with path.open("w") as handle:
            for _ in range(max(1, FILE_MB * 1024 * 1024 // len(block))):
                handle.write(block)
                written += len(block)
                if written >= target:
                    break
        index += 1
    return written


def time_json(folder: Path) -> float:
    start = time.perf_counter()
    for path in sorted(folder.iterdir()):
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                json.loads(line)
    return time.perf_counter() - start


def time_scan(folder: Path) -> tuple[float, int, int]:
    start = time.perf_counter()
    calls = rows = 0
    tally = ReadTally()
    for source in sources([folder], tally):
        for row in scan_calls(source.read(tally)):
            calls += row.calls
            rows += 1
    return time.perf_counter() - start, calls, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="loopfuse-bench-"))
    try:
        size = generate(folder, args.size_mb) / 1024 / 1024
        print(f"generated {size:.0f} MB in {len(list(folder.iterdir()))} files")
        parse = time_json(folder)
        scan, calls, rows = time_scan(folder)
    finally:
        shutil.rmtree(folder)
    print(f"json.loads alone : {parse:7.2f} s  {size / parse:7.1f} MB/s")
    print(f"loopfuse scan    : {scan:7.2f} s  {size / scan:7.1f} MB/s  {calls / scan:,.0f} calls/s"
          f"  ({calls:,} calls, {rows} agent runs)")  # fmt: skip
    print(f"ratio scan/json  : {parse / scan:.2f}x the json parse speed (target >= 0.5)")


if __name__ == "__main__":
    main()
