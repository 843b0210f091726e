"""What a process's open descriptors hold, so a descriptor series that steps up in the soak says which
kind grew: a pool's connections to one service (Redis, Postgres, the model server), files, or the rest.

The embedded Redis and Postgres listen on Unix sockets, whose client ends carry no path: `ss -xp` pairs
each one with its peer, whose path names the service."""

import re
import subprocess
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import psutil

_USERS = re.compile(r"pid=(\d+),fd=(\d+)")


def _service(path: str) -> str:
    if "PGSQL" in path:
        return "postgres"
    return "redis" if "redis" in path else path.rsplit("/", 1)[-1]


@dataclass
class UnixPeers:
    """One `ss -xpn` snapshot: for each (pid, fd) of a connected Unix socket, the service at its other end."""

    by_fd: dict[tuple[int, int], str] = field(default_factory=dict)

    @classmethod
    def snapshot(cls) -> "UnixPeers":
        listed = subprocess.run(["ss", "-xpn"], capture_output=True, text=True, check=False).stdout
        rows = [line.split() for line in listed.splitlines()[1:]]
        # A server's accepted socket shows the listening path as its local address; its peer is the client.
        path_of_inode = {row[5]: row[4] for row in rows if len(row) >= 8 and row[4].startswith("/")}
        peers = cls()
        for row in rows:
            if len(row) < 9:
                continue  # no process column: a socket of a process ss may not read
            service = _service(path_of_inode[row[7]]) if row[7] in path_of_inode else "unnamed unix peer"
            for pid, fd in _USERS.findall(" ".join(row[8:])):
                peers.by_fd[(int(pid), int(fd))] = service
        return peers


def listening_ports(processes: Mapping[str, list[psutil.Process]]) -> dict[int, str]:
    """TCP port → the label of the stack's process listening on it (the API, the model server)."""
    ports: dict[int, str] = {}
    for name, group in processes.items():
        for process in group:
            try:
                for connection in process.net_connections(kind="tcp"):
                    if connection.status == psutil.CONN_LISTEN:
                        ports[connection.laddr.port] = name
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
    return ports


def fd_kinds(process: psutil.Process, ports: Mapping[int, str], unix: UnixPeers) -> Counter[str]:
    """Descriptors by kind: `→ redis` / `→ postgres` / `→ model server …` (a connection to that service),
    `← a client` (accepted on a port the stack listens on), `→ unnamed unix peer` (a socketpair, an
    accepted Unix connection), `listening`, `file`, and `other` (pipes, epoll, eventfd...)."""
    kinds: Counter[str] = Counter()
    for connection in process.net_connections(kind="all"):
        if connection.raddr and isinstance(connection.raddr, tuple):
            if connection.laddr.port in ports:  # accepted on a port the stack listens on
                kinds["← a client"] += 1
            else:
                kinds[f"→ {ports.get(connection.raddr.port, f'port {connection.raddr.port}')}"] += 1
        elif connection.status == psutil.CONN_LISTEN:
            kinds["listening"] += 1
        elif (process.pid, connection.fd) in unix.by_fd:
            kinds[f"→ {unix.by_fd[(process.pid, connection.fd)]}"] += 1
    kinds["file"] = len(process.open_files())
    kinds["other"] = process.num_fds() - sum(kinds.values())
    return +kinds  # the zero counts left out


def changed_kinds(first: Mapping[str, int], last: Mapping[str, int]) -> str:
    """`→ redis 3 → 5` for each kind whose count differs between two samples."""
    names = sorted(set(first) | set(last))
    steps = [f"{n} {first.get(n, 0)} → {last.get(n, 0)}" for n in names if first.get(n, 0) != last.get(n, 0)]
    return "; ".join(steps) or "no kind changed"


def fd_change_lines(kinds_by_minute: list[dict[str, dict[str, int]]], start: int) -> list[str]:
    """One Markdown bullet per process whose descriptors changed between sample `start` and the last."""
    if not kinds_by_minute:
        return ["- no samples"]
    first, last = kinds_by_minute[start], kinds_by_minute[-1]
    lines = [
        f"- {name}: {changed_kinds(first.get(name, {}), last.get(name, {}))}"
        for name in sorted(set(first) | set(last))
        if first.get(name, {}) != last.get(name, {})
    ]
    return lines or ["- none changed"]
