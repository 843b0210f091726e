"""One attacker's stack for the security tests that need a real server process (tests/security/stack.py),
started the first time a test asks for it."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.runtime.services import ServiceUrls
from tests.security.stack import Stack, running_stack


@pytest.fixture(scope="session")
def stack(services: ServiceUrls, data_dir: Path) -> Iterator[Stack]:
    with running_stack(services, data_dir) as running:
        yield running
