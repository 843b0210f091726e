"""The soak's descriptor breakdown (benchmarks/load/soak_fds.py) on this test process's own descriptors: a
connection over a Unix socket is named by the service at its other end, one over TCP by the process
listening on its port, and what changed between two samples is said per kind."""

import socket
from pathlib import Path

import psutil

from benchmarks.load.soak_fds import UnixPeers, changed_kinds, fd_change_lines, fd_kinds, listening_ports


def test_connections_are_named_by_the_service_at_their_other_end(tmp_path: Path) -> None:
    me = psutil.Process()
    opened: list[socket.socket] = []

    def unix_server(name: str) -> socket.socket:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(tmp_path / name))
        server.listen()
        opened.append(server)
        return server

    def connect(server: socket.socket) -> None:
        client = socket.socket(socket.AF_UNIX)
        client.connect(server.getsockname())
        opened.extend([client, server.accept()[0]])

    try:
        redis, postgres = unix_server("redis.sock"), unix_server(".s.PGSQL.5432")
        model = socket.create_server(("127.0.0.1", 0))
        opened.append(model)
        before = fd_kinds(me, listening_ports({"model server": [me]}), UnixPeers.snapshot())
        connect(redis)
        connect(redis)
        connect(postgres)
        opened.append(socket.create_connection(model.getsockname()))
        opened.append(model.accept()[0])
        after = fd_kinds(me, listening_ports({"model server": [me]}), UnixPeers.snapshot())
        open_now = me.num_fds()
    finally:
        for s in opened:
            s.close()

    # Both ends of each connection are in this process: the client's end names the service; the accepted
    # end's peer is an unnamed Unix client, or over TCP a client of the listening port.
    assert after["→ redis"] - before.get("→ redis", 0) == 2
    assert after["→ postgres"] - before.get("→ postgres", 0) == 1
    assert after["→ model server"] - before.get("→ model server", 0) == 1
    assert after["→ unnamed unix peer"] - before.get("→ unnamed unix peer", 0) == 3
    assert after["← a client"] - before.get("← a client", 0) == 1
    assert sum(after.values()) == open_now


def test_the_kinds_add_up_to_the_open_descriptors(tmp_path: Path) -> None:
    me = psutil.Process()
    with (tmp_path / "held.txt").open("w"):
        kinds = fd_kinds(me, {}, UnixPeers.snapshot())
        assert kinds["file"] >= 1
        assert sum(kinds.values()) == me.num_fds()


def test_what_changed_is_said_per_kind() -> None:
    first = {"→ redis": 3, "file": 2, "other": 8}
    last = {"→ redis": 5, "file": 2, "other": 8, "→ model server": 1}
    assert changed_kinds(first, last) == "→ model server 0 → 1; → redis 3 → 5"
    assert changed_kinds(first, dict(first)) == "no kind changed"
    samples = [
        {"worker agents": first, "api": {"other": 4}},
        {},
        {"worker agents": last, "api": {"other": 4}},
    ]
    assert fd_change_lines(samples, start=0) == ["- worker agents: → model server 0 → 1; → redis 3 → 5"]
    assert fd_change_lines([samples[0], samples[0]], start=0) == ["- none changed"]
