"""A real local SMTP server (aiosmtpd) for the tests that mail: it keeps every message it is given."""

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


class Inbox:
    """An aiosmtpd handler keeping every message, with its recipients."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], EmailMessage]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # aiosmtpd's name
        message = message_from_bytes(envelope.content, policy=policy.default)
        self.messages.append((list(envelope.rcpt_tos), message))  # type: ignore[arg-type]
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        return [message for recipients, message in self.messages if address in recipients]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def smtp_server() -> Iterator[tuple[Inbox, int]]:
    """(inbox, port) of a server on 127.0.0.1, for as long as the block lasts."""
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()
