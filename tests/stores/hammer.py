"""One worker process of the concurrency test: checks calls on shared agents, prints how many ran.

Usage: hammer.py URL SCENARIOS_JSON. Each scenario is {prefix, config, rounds, distinct}. The
process prints "ready", waits for a line on stdin (so all workers start together), runs every
scenario on the agent "shared" and prints one JSON result per scenario.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from loopfuse import Guard


def run(url: str, scenario: dict[str, Any]) -> dict[str, Any]:
    mapping = dict(scenario["config"])
    mapping["store"] = {"url": url, "prefix": scenario["prefix"], "on_store_error": "deny"}
    guard = Guard.from_config(mapping)
    ran = 0
    for _ in range(scenario["rounds"]):
        for i in range(scenario["distinct"]):
            ran += guard.check("fetch", {"page": i}, "shared").allowed
    stats = guard.stats()
    guard.close()
    return {"ran": ran, "checks": stats["checks"], "fail_open": stats["fail_open"]}


def main() -> None:
    url, scenarios = sys.argv[1], json.loads(sys.argv[2])
    print("ready", flush=True)
    sys.stdin.readline()
    print(json.dumps([run(url, s) for s in scenarios]), flush=True)


if __name__ == "__main__":
    main()
