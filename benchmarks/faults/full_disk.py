"""A small disk of its own for the full-disk test and fault: a tmpfs (root only), filled with a ballast
file to a chosen number of free megabytes, and a way to make the embedded Postgres meet it."""

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from core.runtime.disk import MB, free_bytes


def can_mount(where: Path) -> bool:
    """Whether a tmpfs can be mounted here (root, and allowed to mount: not every container is)."""
    try:
        with tmpfs(where, 1):
            return True
    except subprocess.CalledProcessError:
        return False


@contextmanager
def tmpfs(where: Path, size_mb: int) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    command = ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(where)]
    subprocess.run(command, check=True, capture_output=True)
    try:
        yield where
    finally:
        # Lazy: a Postgres or Redis that outlived its stop must not keep the mount (and the test) alive.
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(ballast: Path, leave_mb: float) -> None:
    """The ballast file grown or shrunk so that `leave_mb` stays free on its filesystem."""
    current = ballast.stat().st_size if ballast.exists() else 0
    target = max(0, current + free_bytes(str(ballast.parent)) - int(leave_mb * MB))
    with ballast.open("ab") as file:
        file.truncate(target)
        if target > current:
            os.posix_fallocate(file.fileno(), current, target - current)  # tmpfs pages are taken now


def exhaust_wal(database_url: str) -> int:
    """Writes WAL and switches segments until Postgres cannot create one (it uses recycled ones first)
    and the server goes down; how many switches it took. A logical message is WAL alone: no table grows,
    so no DiskFull error stops the loop first."""
    for switches in range(1, 40):
        try:
            with psycopg.connect(database_url, autocommit=True) as conn:
                conn.execute("SELECT pg_logical_emit_message(false, 'disk-full-test', 'x')")
                conn.execute("SELECT pg_switch_wal()")
        except psycopg.errors.DiskFull:
            continue
        except psycopg.OperationalError:  # the connection died with the server
            return switches
    raise AssertionError("Postgres kept creating WAL segments on a full disk")
