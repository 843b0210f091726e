"""Background runs (worker jobs) use the chat model through the same admission queue as the API
(core/llm/admission.py), with background priority and a slot per model call rather than per run: a note of
several model minutes then lets interactive requests in between its calls instead of holding the model
throughout. Interactive runs hold one slot for the run (agents/runs/service.py)."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.language_models import BaseChatModel

from core.llm.admission import LlmAdmission, Ticket

log = logging.getLogger(__name__)


class AdmissionCallback(AsyncCallbackHandler):
    """Waits for a background slot when a chat model call starts and frees it when the call ends or
    fails. Callbacks run before the request is sent, and an error here (Redis down) fails the call."""

    raise_error = True
    run_inline = True

    def __init__(self, admission: LlmAdmission, user: str) -> None:
        self._admission = admission
        self._user = user
        self._held: dict[UUID, Ticket] = {}

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        ticket = await self._admission.enqueue(user=self._user, priority="background")
        try:
            await ticket.acquired()
        except BaseException:
            await ticket.release()
            raise
        self._held[run_id] = ticket

    async def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        await self._free(run_id)

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        await self._free(run_id)

    async def _free(self, run_id: UUID) -> None:
        ticket = self._held.pop(run_id, None)
        if ticket is not None:
            await ticket.release()

    async def release_all(self) -> None:
        """Whatever a call left held (a path that ended without its end callback)."""
        while self._held:
            await self._held.popitem()[1].release()


@asynccontextmanager
async def admitted_model(
    llm: BaseChatModel, admission: LlmAdmission, *, user: str
) -> AsyncIterator[BaseChatModel]:
    """`llm` with each call admitted with background priority for `user` (fair among users like the
    API's requests). Slots still held when the block ends are freed. A model admitted already is
    yielded as it is: a second callback would wait for a second slot per call."""
    own = llm.callbacks if isinstance(llm.callbacks, list) else []
    if any(isinstance(handler, AdmissionCallback) for handler in own):
        yield llm
        return
    callback = AdmissionCallback(admission, user)
    try:
        yield llm.model_copy(update={"callbacks": [*own, callback]})
    finally:
        await callback.release_all()
