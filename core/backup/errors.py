"""The one error a backup or a restore ends with: its message is what the operator reads."""


class BackupError(Exception):
    """A backup that cannot be written, or a restore that is refused or fails; the message says why."""
