"""The Redis store: check and tool call latency next to a bare PING, throughput over processes,
bytes per agent.

A tool call is a check and, when allowed, ``record_result`` with a new result each time: the
result travels with the agent's next check, so a tool call costs one round trip.
Starts its own redis-server (no persistence, temp dir, free port) unless ``--url`` is given.

    python bench/redis_store.py [--url redis://127.0.0.1:6379/0] [--checks 5000] [--per-process 2000]
                                [--server-calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis
import redis.asyncio as aredis

from loopfuse import Guard

CONFIG: dict[str, Any] = {"loop_brake": {"max_repeats": 3}}  # defaults: window 200, limit 6, cap 300
AS_SCRIPTS: dict[str, Any] = {**CONFIG, "store": {"redis_functions": False}}  # EVALSHA, not FCALL
KINDS = ("cap", "duplicate", "loop_brake", "same_error", "stall", "near_duplicate", "cycle", "failures")
OFF: dict[str, Any] = {kind: {"enabled": False} for kind in KINDS}  # every breaker off


@contextmanager
def redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (or pass --url)")
    with tempfile.TemporaryDirectory() as tmp, socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        proc = subprocess.Popen([*args, "--dir", tmp], stdout=subprocess.DEVNULL)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            wait_ready(url)
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def wait_ready(url: str) -> None:
    client = redis.Redis.from_url(url, socket_timeout=0.5)
    for _ in range(200):
        try:
            client.ping()
            return
        except redis.RedisError:
            time.sleep(0.05)
    sys.exit(f"no redis-server answers at {url}")


def timings(fn: Callable[[int], object], n: int, first: int = 0) -> list[float]:
    out = []
    for i in range(first, first + n):
        start = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - start)
    return out


def interleaved(rows: dict[str, Callable[[int], object]], n: int, rounds: int = 20) -> dict[str, list[float]]:
    """``n`` timings of each row, taken in ``rounds`` turns (on a shared machine the load
    changes during a run: each row sees the same mix of it)."""
    out: dict[str, list[float]] = {name: [] for name in rows}
    chunk = n // rounds
    for r in range(rounds):
        for name, fn in rows.items():
            out[name] += timings(fn, chunk, r * chunk)
    return out


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e6, ordered[int(len(ordered) * 0.99)] * 1e6


def guard_for(url: str, prefix: str, delay: float = 0.5, config: dict[str, Any] = CONFIG) -> Guard:
    """A guard on ``url``; a round trip may take 2 s (not 0.25): on a busy machine a slow one
    would fail open and skip the network for 0.5 s, which would flatter the figures."""
    store = {
        "url": url,
        "prefix": prefix,
        "result_flush_delay": delay,
        "timeout": 2.0,
        **config.get("store", {}),
    }
    return Guard.from_config({**config, "store": store})


def check_at(guard: Guard, run: str) -> Callable[[int], object]:
    """Realistic traffic: agents of 100 calls each, every 10th call a repeat."""
    return lambda i: guard.check("read", {"path": f"/src/{0 if i % 10 == 0 else i}"}, f"{run}-{i // 100}")


def tool_call_at(guard: Guard, run: str) -> Callable[[int], object]:
    """The same traffic, each allowed call's result reported (a new page of output each time)."""

    def step(i: int) -> None:
        tool, args, agent = "read", {"path": f"/src/{0 if i % 10 == 0 else i}"}, f"{run}-{i // 100}"
        if guard.check(tool, args, agent).allowed:
            guard.record_result(tool, args, f"contents #{i}", agent, ok=True)

    return step


def latency(url: str, n: int) -> None:
    client = redis.Redis.from_url(url)
    guard, memory = guard_for(url, f"bench{uuid.uuid4().hex[:6]}:"), Guard.from_config(CONFIG)
    two_trips = guard_for(url, f"bench{uuid.uuid4().hex[:6]}:", delay=0)
    scripts = guard_for(url, f"bench{uuid.uuid4().hex[:6]}:", config=AS_SCRIPTS)
    timings(lambda i: client.ping(), 200)
    for warmed in (guard, scripts):
        timings(check_at(warmed, "warm"), 200)
        timings(tool_call_at(warmed, "warm-results"), 200)
    timings(tool_call_at(two_trips, "warm-results"), 200)
    rows = interleaved(
        {
            "PING (redis-py)": lambda i: client.ping(),
            "check, redis://": check_at(guard, "lat"),
            "  same, as EVALSHA": check_at(scripts, "lat"),
            "check, memory://": check_at(memory, "lat"),
            "tool call, redis://": tool_call_at(guard, "res"),
            "  the same, as EVALSHA": tool_call_at(scripts, "res"),
            "  the same, 2 round trips": tool_call_at(two_trips, "res"),
            "tool call, memory://": tool_call_at(memory, "res"),
        },
        n,
    )
    ping_median = summary(rows["PING (redis-py)"])[0]
    print(f"\nlatency over {n} calls    {'median us':>10} {'p99 us':>9} {'median / PING':>14}")
    for name, samples in rows.items():
        median, p99 = summary(samples)
        print(f"  {name:<23} {median:>10.1f} {p99:>9.1f} {median / ping_median:>14.2f}")
    print("  (tool call: check + record_result, the result sent with the agent's next check;")
    print("   as EVALSHA: [store] redis_functions = false, the scripts re-run their definitions each time;")
    print("   2 round trips: result_flush_delay = 0, each result sent at once, the previous form)")
    failed = [guard.stats()["fail_open"] for guard in (guard, scripts, two_trips)]
    if any(failed):
        print(f"  fail-open checks during the run (the figures are off): {failed}")
    for closed in (guard, scripts, two_trips):
        closed.close()


def async_latency(url: str, n: int) -> None:
    """The same rows for an asyncio host (``acheck``, ``arecord_result``) next to a ``PING`` of
    redis-py's asyncio client, all in one event loop."""
    asyncio.run(_async_latency(url, n))


async def _async_latency(url: str, n: int) -> None:
    client = aredis.Redis.from_url(url)
    guard = guard_for(url, f"bench{uuid.uuid4().hex[:6]}:")

    async def check(i: int) -> None:
        await guard.acheck("read", {"path": f"/src/{0 if i % 10 == 0 else i}"}, f"alat-{i // 100}")

    async def tool_call(i: int) -> None:
        tool, args, agent = "read", {"path": f"/src/{0 if i % 10 == 0 else i}"}, f"ares-{i // 100}"
        if (await guard.acheck(tool, args, agent)).allowed:
            await guard.arecord_result(tool, args, f"contents #{i}", agent, ok=True)

    rows: dict[str, Callable[[int], Awaitable[object]]] = {
        "PING (redis.asyncio)": lambda i: client.ping(),
        "acheck, redis://": check,
        "tool call, redis://": tool_call,
    }
    for run in rows.values():  # warm: connections, the library, caches
        await atimings(run, 200, 10**6)
    samples: dict[str, list[float]] = {name: [] for name in rows}
    for r in range(20):
        for name, run in rows.items():
            samples[name] += await atimings(run, n // 20, r * (n // 20))
    ping_median = summary(samples["PING (redis.asyncio)"])[0]
    print(f"\nasyncio latency over {n} calls")
    print(f"  {'':<23} {'median us':>10} {'p99 us':>9} {'median / PING':>14}")
    for name, got in samples.items():
        median, p99 = summary(got)
        print(f"  {name:<23} {median:>10.1f} {p99:>9.1f} {median / ping_median:>14.2f}")
    print("  (tool call: acheck + arecord_result, the result sent with the agent's next check)")
    await guard.aclose()
    await client.aclose()


async def atimings(fn: Callable[[int], Awaitable[object]], n: int, first: int = 0) -> list[float]:
    out = []
    for i in range(first, first + n):
        start = time.perf_counter()
        await fn(i)
        out.append(time.perf_counter() - start)
    return out


def server_time(url: str, n: int) -> None:
    """Redis's own time per script (``INFO commandstats``), without and with results, for the
    bench's configuration and for each breaker alone: what each part costs the server. (A guard
    without breakers sends nothing; the cap alone is the scripts' driver and one comparison.)"""
    parts = {"all": CONFIG, "all, as EVALSHA": AS_SCRIPTS}
    parts.update({f"{k} alone": {**OFF, k: CONFIG.get(k, {})} for k in KINDS})
    checks, tools = script_times(url, parts, check_at, n), script_times(url, parts, tool_call_at, n)
    print("\nserver time per script (INFO commandstats: FCALL and EVALSHA usec, median of 5 rounds)")
    print(f"  {'breakers':<20} {'check us':>9} {'tool call us':>13} {'scripts per tool call':>22}")
    for part in parts:
        print(f"  {part:<20} {checks[part][0]:>9.1f} {tools[part][0]:>13.1f} {tools[part][1]:>22.2f}")
    usec, size = state_io(url, n)
    print(f"  state I/O alone: {usec:.1f} us (an agent's hash of {size:,} bytes after its 100 tool calls")
    print("  read whole, written back whole, its expiry refreshed; no breaker runs)")


# What a round trip costs Redis on the one-hash layout before any breaker runs.
STATE_IO = """local values = redis.call('HMGET', KEYS[1], unpack(ARGV))
local out = {}
for i, field in ipairs(ARGV) do out[#out + 1] = field; out[#out + 1] = values[i] end
redis.call('HSET', KEYS[1], unpack(out))
redis.call('PEXPIRE', KEYS[1], 86400000)
return 0"""


def state_io(url: str, n: int) -> tuple[float, int]:
    """Redis's time per run of ``STATE_IO`` on the hashes the bench's tool calls leave (agents
    of 100 calls, every result reported), and their mean bytes of values."""
    client, prefix = redis.Redis.from_url(url), f"io{uuid.uuid4().hex[:6]}:"
    guard = guard_for(url, prefix)
    timings(tool_call_at(guard, "io"), max(n, 100))
    guard.close()
    hashes = {key: client.hkeys(key) for key in client.scan_iter(match=f"{prefix}*:s")}
    script = client.register_script(STATE_IO)
    script(keys=[next(iter(hashes))], args=next(iter(hashes.values())))  # loaded
    before = client.info("commandstats")["cmdstat_evalsha"]
    for _ in range(5):
        for key, fields in hashes.items():
            script(keys=[key], args=fields)
    after = client.info("commandstats")["cmdstat_evalsha"]
    size = sum(sum(map(len, client.hvals(key))) for key in hashes) // len(hashes)
    return (after["usec"] - before["usec"]) / (after["calls"] - before["calls"]), size


def script_times(
    url: str, parts: dict[str, dict[str, Any]], step: Callable[[Guard, str], Callable[[int], object]], n: int
) -> dict[str, tuple[float, float]]:
    """Per configuration, the median server time per script and scripts per call, each
    configuration timed in turn over 5 rounds (the load changes during a run)."""
    client, rounds = redis.Redis.from_url(url), 5
    guards = {
        part: guard_for(url, f"srv{uuid.uuid4().hex[:6]}:", config=config) for part, config in parts.items()
    }
    steps = {part: step(guard, "srv") for part, guard in guards.items()}
    samples: dict[str, list[tuple[float, float]]] = {part: [] for part in parts}
    for guard in guards.values():
        timings(step(guard, "warm"), min(n, 200))
    for r in range(rounds):
        for part, run in steps.items():
            before = scripts_run(client)
            timings(run, n // rounds, r * (n // rounds))
            after = scripts_run(client)
            calls = max(1, after[1] - before[1])
            samples[part].append(((after[0] - before[0]) / calls, calls / (n // rounds)))
    for guard in guards.values():
        guard.close()
    return {
        part: (statistics.median(u for u, _ in got), statistics.median(c for _, c in got))
        for part, got in samples.items()
    }


def scripts_run(client: redis.Redis) -> tuple[int, int]:
    """The server's microseconds in scripts so far, and how many ran (FCALL and EVALSHA)."""
    stats = client.info("commandstats")
    runs = [stats.get(f"cmdstat_{command}", {}) for command in ("fcall", "evalsha")]
    return sum(run.get("usec", 0) for run in runs), sum(run.get("calls", 0) for run in runs)


def throughput(url: str, per_process: int) -> None:
    print(f"\nthroughput ({per_process} per process, agents shared across processes)")
    print(f"  {'processes':>9} {'checks/s':>10} {'tool calls/s':>13} {'us/tool call in each':>21}")
    for count in (1, 4, 16):
        checks = count * per_process / run_workers(url, count, per_process, "check")
        elapsed = run_workers(url, count, per_process, "tool")
        calls = count * per_process / elapsed
        print(f"  {count:>9} {checks:>10.0f} {calls:>13.0f} {elapsed / per_process * 1e6:>21.1f}")


def run_workers(url: str, count: int, per_process: int, kind: str) -> float:
    prefix = f"tp{uuid.uuid4().hex[:6]}:"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, __file__, "--worker", url, prefix, str(per_process), kind]
    pipe = subprocess.PIPE
    procs = [subprocess.Popen(argv, stdin=pipe, stdout=pipe, text=True, env=env) for _ in range(count)]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        start = time.time()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        ends = [float(proc.communicate(timeout=300)[0]) for proc in procs]
        return max(ends) - start
    finally:
        for proc in procs:
            proc.kill()


def worker(url: str, prefix: str, n: int, kind: str) -> None:
    guard = guard_for(url, prefix)
    check = check_at(guard, "tp") if kind == "check" else tool_call_at(guard, "tp")
    check(0)
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(n):
        check(i)
    print(time.time(), flush=True)
    guard.close()


def bytes_per_agent(url: str) -> None:
    client = redis.Redis.from_url(url)
    print("\nbytes per agent in Redis (MEMORY USAGE over its keys, window 200)")
    for label, report in (("calls only", False), ("with results", True)):
        prefix = f"mem{uuid.uuid4().hex[:6]}:"
        guard = guard_for(url, prefix)
        done = 0
        for calls in (1, 10, 50, 200, 300):
            for i in range(done, calls):
                args = {"path": f"/src/file_{i}.py"}
                if guard.check("read", args, "agent-0001").allowed and report:
                    guard.record_result("read", args, f"contents {i}", "agent-0001", ok=True)
            done = calls
            guard.flush()
            keys = client.keys(prefix + "*")
            used = sum(client.memory_usage(k, samples=0) or 0 for k in keys)
            print(f"  {label}, after {calls:>3} distinct calls: {used:>6} bytes over {len(keys)} keys")
        guard.close()


def library_bytes(url: str) -> None:
    """What one guard configuration's Function library takes in Redis (``INFO memory`` before and
    after a guard of a configuration of its own loads it): its code, and the Lua state's growth,
    which moves with Lua's garbage collector by tens of KB from run to run (even below zero)."""
    client = redis.Redis.from_url(url)

    def used() -> tuple[int, int]:  # (0, 0) before Redis 7.0, which has no functions
        memory = client.info("memory")
        return int(memory.get("used_memory_functions", 0)), int(memory.get("used_memory_vm_functions", 0))

    before = used()
    own = {**CONFIG, "cap": {"limit": 1000 + int(uuid.uuid4().int % 1000)}}  # a library of its own
    guard = guard_for(url, f"lib{uuid.uuid4().hex[:6]}:", config=own)
    guard.check("read", {"path": "/src/a.py"}, "agent")
    guard.close()
    after = used()
    if after[0] == before[0]:
        print("\nbytes of one Function library in Redis: none, this server has no functions")
        return
    print(
        f"\nbytes of one Function library in Redis: its code {after[0] - before[0]}, "
        f"the Lua state's growth {after[1] - before[1]}"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--checks", type=int, default=5000)
    parser.add_argument("--per-process", type=int, default=2000)
    parser.add_argument(
        "--server-calls", type=int, default=2000, help="calls per configuration timed by Redis"
    )
    opts = parser.parse_args()
    with redis_server() if opts.url is None else _given(opts.url) as url:
        version = redis.Redis.from_url(url).info()["redis_version"]
        print(f"redis-server {version}, redis-py {redis.__version__}")
        latency(url, opts.checks)
        async_latency(url, opts.checks)
        server_time(url, opts.server_calls)
        throughput(url, opts.per_process)
        bytes_per_agent(url)
        library_bytes(url)


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url


if __name__ == "__main__":
    main()
