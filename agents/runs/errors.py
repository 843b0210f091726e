"""Why an agent run gives its caller no answer, as domain errors: the API maps each class to one HTTP
status (backend/middleware/errors.py), a worker to its job's failure reason. The message is what the caller is
told, so it never quotes a prompt or a document."""


class AgentRunError(Exception):
    """A run that ended without an answer; str(error) is safe to show the caller."""


class NotFound(AgentRunError):
    """Something the run needs is not the caller's to use (or is gone)."""


class Unprocessable(AgentRunError):
    """A request this deployment or this item cannot take as asked."""


class Conflict(AgentRunError):
    """The request is valid but the state forbids it (a limit used up, nothing indexed yet)."""


class UnusableReply(AgentRunError):
    """The chat model's reply stayed unreadable (the structured output failed, even after a retry)."""


class ModelUnreachable(AgentRunError):
    """The chat model could not be reached; `retry_after` seconds is when to try again."""

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class Forbidden(AgentRunError):
    """The caller's role may not do this."""
