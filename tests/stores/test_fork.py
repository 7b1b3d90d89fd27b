"""Workers forked from a process that made a Redis guard (a pre-fork server: gunicorn --preload,
Celery prefork): each child's round trips are its own. They shared the parent's round-trip ids,
so a child was answered with another child's kept reply: calls ran uncounted, past the cap."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.store_fixtures import RedisServer, unique_prefix

CHILDREN = textwrap.dedent(
    """
    import os, sys
    from loopfuse import Guard

    url, prefix = sys.argv[1], sys.argv[2]
    Guard.from_config({"store": {"url": url, "prefix": prefix}}).close()  # made before the fork
    for path in ("a.txt", "b.txt", "c.txt"):  # one child after another
        pid = os.fork()
        if pid == 0:
            guard = Guard.from_config({"cap": {"limit": 1}, "store": {"url": url, "prefix": prefix}})
            decision = guard.check("read", {"path": path}, "run-1")
            print(path, decision.allowed, decision.kind, flush=True)
            guard.close()
            os._exit(0)
        os.waitpid(pid, 0)
    """
)


def test_children_forked_after_a_redis_guard_was_made_each_count(redis_server: RedisServer) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-c", CHILDREN, redis_server.url, unique_prefix()]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, check=True)
    assert done.stdout.splitlines() == ["a.txt True None", "b.txt False cap", "c.txt False cap"]


def test_a_forked_child_names_itself_with_a_number_of_its_own() -> None:
    """Run labels (LangChain, smolagents) and round-trip ids are made from it."""
    code = "import os; from loopfuse._process import process_number as n; a = n(); pid = os.fork()\n"
    code += "if pid == 0: print(n() != a, flush=True); os._exit(0)\nos.waitpid(pid, 0)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, check=True
    )
    assert done.stdout.strip() == "True"


BUSY_PARENT = textwrap.dedent(
    """
    import os, sys, threading
    from loopfuse import Guard

    config = {"store": {"url": sys.argv[1]}, "guard": {"abort_after_denials": 0}, "cap": {"limit": 0}}
    guard = Guard.from_config(config)
    stop = False

    def hammer(i):
        n = 0
        while not stop:
            guard.check("read", {"p": n % 50}, f"agent{i % 2}", round=n)
            n += 1

    threads = [threading.Thread(target=hammer, args=(i,), daemon=True) for i in range(8)]
    for t in threads:
        t.start()
    for _ in range(5):
        pid = os.fork()
        if pid == 0:
            __import__("signal").alarm(10)  # a hung child ends
            decision = guard.check("read", {"p": "child"}, "agent0", round="c")
            print("checked", decision.kind, guard.stats()["checks"] > 0, flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
    stop = True
    """
)


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_a_child_forked_while_threads_check_is_not_blocked(redis_server: RedisServer, store: str) -> None:
    """It inherited the locks those threads held (the store's, a round's): its first check hung."""
    url = redis_server.url if store == "redis" else "memory://"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", BUSY_PARENT, url], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.stdout.splitlines() == ["checked None True"] * 5, done.stderr
