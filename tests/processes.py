"""Process checks shared by the tests that start and kill real child processes."""

import os


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
