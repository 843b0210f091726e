"""A fake model server that takes the embedded model's measured time on a 2-core CPU, for the scale-out
load benchmark (benchmarks/load/scale_out.py): several of them stand for model servers on machines of
their own, which this machine cannot run for real.

Each call's work is its prefill (prompt tokens not already in the server's prompt cache, at
PREFILL_TPS) and its generation (reply tokens, at GENERATE_TPS), both measured alone on this machine
(benchmarks/reports/llm_server.md, qa_latency.md: ~90 prompt tokens/s, ~15 generated tokens/s). Calls
running together share the server as llama.cpp's slots share two cores: k calls at once get k**0.22
times the work of one done per second in all (4 slots gave 1.35x one slot's streamed answers per
minute, benchmarks/reports/llm_slots.md and load.md), each a k-th of it. A prompt seen before (the same
instructions and passages) costs only its last few tokens, as llama.cpp's prompt cache does. Replies
are CitingChatServer's (every agent answered, citations real); a streamed one arrives as it is
"generated"."""

import hashlib
import json
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from benchmarks.fake_answers import CitingChatServer

PREFILL_TPS = 90.0
GENERATE_TPS = 15.0
BATCH_EXPONENT = 0.22  # k calls at once: k**0.22 one call's throughput in all
CHARS_PER_TOKEN = 4.0
CACHED_TAIL_TOKENS = 8  # a prompt in the cache still prefills its last tokens
CACHE_PROMPTS = 64
TICK_S = 0.05


class SimulatedCpuModel(CitingChatServer):
    def __init__(self, slots: int = 4) -> None:
        super().__init__(delay_s=0.0, piece_chars=8)
        self.slots = slots
        self.active = self.peak = self.calls = 0
        self._cache: OrderedDict[str, None] = OrderedDict()
        self.add_route("/props", self._props)

    async def _props(self, request: Request) -> Response:
        return JSONResponse({"total_slots": self.slots})  # as llama.cpp's server reports it

    def _share(self) -> float:
        """The work one of the calls running now gets done per second (one call alone: 1)."""
        k = max(self.active, 1)
        return float(k**BATCH_EXPONENT / k)

    async def _work(self, solo_s: float) -> None:
        """Waits as long as `solo_s` seconds of one call alone take while the others run too."""
        remaining = solo_s
        while remaining > 0:
            await anyio.sleep(TICK_S)
            remaining -= TICK_S * self._share()

    def _prefill_s(self, body: dict[str, Any]) -> float:
        prompt = json.dumps(body.get("messages", []), sort_keys=True)
        digest = hashlib.sha256(prompt.encode()).hexdigest()
        tokens = len(prompt) / CHARS_PER_TOKEN
        if digest in self._cache:
            self._cache.move_to_end(digest)
            tokens = CACHED_TAIL_TOKENS
        else:
            self._cache[digest] = None
            while len(self._cache) > CACHE_PROMPTS:
                self._cache.popitem(last=False)
        return tokens / PREFILL_TPS

    async def _reply(self, body: dict[str, Any]) -> Response:
        self.active += 1
        self.calls += 1
        self.peak = max(self.peak, self.active)
        try:
            await self._work(self._prefill_s(body))
            response = await super()._reply(body)
        except BaseException:
            self.active -= 1
            raise
        if isinstance(response, StreamingResponse):
            return StreamingResponse(self._generated(response.body_iterator), media_type="text/event-stream")
        try:
            text = bytes(response.body).decode()
            await self._work(len(text) / CHARS_PER_TOKEN / GENERATE_TPS)
        finally:
            self.active -= 1
        return response

    async def _generated(self, pieces: Any) -> AsyncIterator[Any]:
        """The streamed reply's pieces, each after the time its tokens take to generate."""
        try:
            async for piece in pieces:
                text = piece.decode() if isinstance(piece, bytes) else str(piece)
                if '"content"' in text:
                    content = json.loads(text.removeprefix("data: "))["choices"][0]["delta"]["content"]
                    await self._work(len(content) / CHARS_PER_TOKEN / GENERATE_TPS)
                yield piece
        finally:
            self.active -= 1
