"""A member's role in a project, highest first: owners manage members and invitations, editors change
the material, viewers (students) read and study it."""

from typing import Literal

Role = Literal["owner", "editor", "viewer"]
RANK: dict[str, int] = {"owner": 0, "editor": 1, "viewer": 2}  # lower is higher
