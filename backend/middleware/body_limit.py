"""Request bodies over their route's cap answer 413 before routing, parsing or authentication.

A plain ASGI middleware: a Content-Length over the cap is refused before one byte is read, and a body
without one (chunked) is counted as it streams through `receive` and cut off at the cap, so the app,
the multipart parser and its temp files never see more than the cap. Only document uploads (POST
/projects/{id}/documents, PATCH /projects/{id}/documents/{id}, file or JSON text) get
MAX_UPLOAD_BYTES, a course's folder or ZIP (POST /projects/{id}/documents/batch) COURSE_UPLOAD_MAX_BYTES;
every other route gets MAX_JSON_BODY_BYTES."""

import json
import re
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.web.language import said, scope_language
from core.messages import Text

# Part headers and boundaries around an upload's file, and a title field: the file itself is held to
# MAX_UPLOAD_BYTES exactly by backend/documents/uploads.py.
MULTIPART_OVERHEAD = 64 * 1024
_DOCUMENTS = re.compile(r"/projects/[^/]+/documents/?")
_DOCUMENT = re.compile(r"/projects/[^/]+/documents/[^/]+/?")
_BATCH = re.compile(r"/projects/[^/]+/documents/batch/?")
# A course's files around their parts: headers per file, at most COURSE_UPLOAD_MAX_FILES of them.
_PART_OVERHEAD = 1024
_MIB = 1024 * 1024


def size_text(size: int) -> str:
    if size % _MIB == 0:
        return f"{size // _MIB} MB"
    if size % 1024 == 0:
        return f"{size // 1024} KB"
    return f"{size} bytes"


def upload_too_large_detail(limit: int) -> Text:
    return Text("upload.too_large", limit=size_text(limit))


class BodyTooLarge(HTTPException):
    """Raised from `receive` once the cap is passed. An HTTPException, so FastAPI's body parsing lets it
    through instead of calling it a 400; the middleware answers 413 whatever the app makes of it."""

    def __init__(self, detail: Text) -> None:
        super().__init__(413, detail)


@dataclass(frozen=True)
class BodyCaps:
    upload_bytes: int  # MAX_UPLOAD_BYTES: a document's file, or its new text as JSON
    json_bytes: int  # MAX_JSON_BODY_BYTES: every other route
    course_bytes: int = 500 * _MIB  # COURSE_UPLOAD_MAX_BYTES: a course's folder or ZIP (POST .../batch)
    course_files: int = 2000

    def for_request(self, method: str, path: str) -> tuple[int, Text]:
        """(cap in bytes, the 413's detail) for a request."""
        if method == "POST" and _BATCH.fullmatch(path):
            overhead = MULTIPART_OVERHEAD + self.course_files * _PART_OVERHEAD
            detail = Text("upload.course_too_large", limit=size_text(self.course_bytes))
            return self.course_bytes + overhead, detail
        if (method == "POST" and _DOCUMENTS.fullmatch(path)) or (
            method == "PATCH" and _DOCUMENT.fullmatch(path)
        ):
            return self.upload_bytes + MULTIPART_OVERHEAD, upload_too_large_detail(self.upload_bytes)
        return self.json_bytes, Text("upload.body_too_large", limit=size_text(self.json_bytes))


class BodyLimitMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        upload_bytes: int,
        json_bytes: int,
        course_bytes: int = 500 * _MIB,
        course_files: int = 2000,
    ) -> None:
        self.app = app
        self.caps = BodyCaps(
            upload_bytes=upload_bytes,
            json_bytes=json_bytes,
            course_bytes=course_bytes,
            course_files=course_files,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        root = scope.get("root_path") or ""
        if root and path.startswith(root):
            path = path[len(root) :]
        cap, detail = self.caps.for_request(scope["method"], path)
        declared = _content_length(scope)
        if declared is not None and declared > cap:
            await _reject(scope, send, detail)  # nothing read: the server closes the connection
            return

        received = 0
        exceeded = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            if exceeded:
                raise BodyTooLarge(detail)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:  # this chunk is never handed on: the app sees at most `cap` bytes
                    exceeded = True
                    raise BodyTooLarge(detail)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded:  # whatever the app answers to the cut-off body (its own 413, a 400), ours goes
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not exceeded:
                raise
        if exceeded and not started:
            await _reject(scope, send, detail)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name.lower() == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None  # a malformed one is the server's to refuse
    return None


async def _reject(scope: Scope, send: Send, detail: Text) -> None:
    # Before routing: no project is known yet, so the sentence is in the language the request asks for.
    body = json.dumps(said(detail, scope_language(scope))).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),  # the rest of the body is never read
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
