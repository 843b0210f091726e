"""A whole course at once (issue 29): a folder's files or a course ZIP as one batch, budgets in bytes and
queued jobs rather than requests, and a course ZIP treated as the hostile input it may be."""

import asyncio
import io
import struct
import subprocess
import time
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from core.runtime.services import ServiceUrls
from core.settings import Settings
from tests.conftest import Caller, UserFactory, add_member, changed_settings, create_project, own_app, upload

CHAPTER = (
    "# Chapter {n}\n\nOwnership rule number {n}: each value has one owner, and it is dropped after use.\n"
)


@dataclass
class Course:
    app: FastAPI
    http: httpx.AsyncClient
    owner: Caller
    student: Caller
    project_id: str


@pytest.fixture(scope="module")
async def course(
    settings: Settings, services: ServiceUrls, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> AsyncIterator[Course]:
    async with own_app(settings, services) as (app, http):
        owner, student = await make_user("course-teacher"), await make_user("course-student")
        project_id = await create_project(http, owner, name="a whole course", language="en")
        await add_member(http, owner, project_id, student, "viewer")
        yield Course(app, http, owner, student, project_id)


async def send_batch(
    course: Course, files: list[tuple[str, bytes]], headers: Caller | None = None, **params: str
) -> httpx.Response:
    return await course.http.post(
        f"/projects/{course.project_id}/documents/batch",
        files=[("files", (path, content, "application/octet-stream")) for path, content in files],
        params=params,
        headers=headers or course.owner,
    )


async def wait_for_batch(course: Course, batch_id: str, timeout: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = await course.http.get(
            f"/projects/{course.project_id}/documents/batches/{batch_id}", headers=course.owner
        )
        assert response.status_code == 200, response.text
        if response.json()["done"]:
            return response.json()
        await asyncio.sleep(0.5)
    raise AssertionError(f"batch {batch_id} not done in {timeout} s")


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def lying_bomb(name: str, inflated: int, declared: int) -> bytes:
    """A ZIP whose one member inflates to `inflated` bytes of zeros but declares `declared` in both its
    local header and the central directory: the sizes a bomb gives are not to be believed."""
    data = bytearray(zip_of({name: bytes(inflated)}))
    local = data.find(b"PK\x03\x04")
    struct.pack_into("<I", data, local + 22, declared)
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, declared)
    return bytes(data)


async def test_a_course_folder_is_one_batch_with_its_paths_and_its_refusals(course: Course) -> None:
    chapters = [
        (f"rust-course/week{n // 10}/chapter{n:03}.md", CHAPTER.format(n=n).encode()) for n in range(120)
    ]
    extras = [
        ("rust-course/logo.gif", b"GIF89a" + bytes(64)),
        ("rust-course/.DS_Store", b"\x00\x00\x00\x01Bud1" + bytes(32)),
    ]
    response = await send_batch(course, chapters + extras)
    assert response.status_code == 202, response.text
    body = response.json()
    assert len(body["accepted"]) == 120  # past the 60 uploads an hour that used to stop a teacher
    assert body["accepted"][7]["path"] == "rust-course/week0/chapter007.md"
    refused = {item["path"]: item["reason"] for item in body["refused"]}
    assert set(refused) == {"rust-course/logo.gif"}, refused  # the hidden file is skipped, not refused
    assert (
        "GIF" in refused["rust-course/logo.gif"] and "accepted types are" in refused["rust-course/logo.gif"]
    )

    progress = await wait_for_batch(course, body["batch_id"])
    assert (progress["total"], progress["ready"], progress["failed"]) == (120, 120, 0)
    titles = {document["title"] for document in progress["documents"]}
    assert "rust-course/week1/chapter012" in titles
    assert progress["refused"] == body["refused"]


async def test_a_course_zip_with_hostile_members(course: Course) -> None:
    archive = zip_of(
        {
            "course/intro.md": b"# Intro\n\nBorrowing lets a function use a value without owning it.\n",
            "../../../etc/escape.md": b"# Escape\n\nA member name that climbs out of the folder.\n",
            "/absolute/rooted.md": b"# Rooted\n\nA member name with an absolute root.\n",
            "course/inner.zip": zip_of({"x.md": b"# x\n"}),
            "course/program.exe": b"\x7fELF" + bytes(100),
            "__MACOSX/course/._intro.md": b"\x00\x05\x16\x07",
        }
    )
    response = await send_batch(course, [("course.zip", archive)])
    assert response.status_code == 202, response.text
    body = response.json()
    accepted = {item["path"] for item in body["accepted"]}
    # Names are only titles, cleaned all the same: nothing climbs out, nothing is rooted.
    assert accepted == {"course/intro.md", "etc/escape.md", "absolute/rooted.md"}
    refused = {item["path"]: item["reason"] for item in body["refused"]}
    assert "ZIP inside" in refused["course/inner.zip"]
    assert "program" in refused["course/program.exe"]
    progress = await wait_for_batch(course, body["batch_id"])
    assert progress["ready"] == 3


async def test_a_bomb_in_a_course_zip_is_refused_and_the_rest_taken(course: Course) -> None:
    limit = 1024 * 1024
    with changed_settings(course.app, max_upload_bytes=limit):
        liar = lying_bomb("liar.md", inflated=8 * limit, declared=1000)
        assert zipfile.ZipFile(io.BytesIO(liar)).infolist()[0].file_size == 1000  # what it claims
        honest = zip_of({"honest.md": bytes(8 * limit)})
        files = [("liar.zip", liar), ("honest.zip", honest), ("fine.md", b"# Fine\n\nStill taken.\n")]
        response = await send_batch(course, files)
    assert response.status_code == 202, response.text
    body = response.json()
    assert [item["path"] for item in body["accepted"]] == ["fine.md"]
    refused = {item["path"]: item["reason"] for item in body["refused"]}
    # Inflating stops at the size the member declared (zipfile), so the liar fails its checksum there.
    assert "cannot be read" in refused["liar.md"] and "CRC" in refused["liar.md"]
    assert "larger than the limit of 1 MB" in refused["honest.md"]


async def test_a_zip_with_too_many_members_is_refused_whole(course: Course) -> None:
    with changed_settings(course.app, course_upload_max_files=50):
        archive = zip_of({f"tiny/{n}.md": b"# t\n" for n in range(51)})
        response = await send_batch(course, [("many.zip", archive)])
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["accepted"] == []
    assert "51 files, more than the 50 allowed" in body["refused"][0]["reason"]


async def test_budgets_count_bytes_and_the_project_storage(course: Course) -> None:
    chapter = CHAPTER.format(n=1).encode()
    with changed_settings(course.app, upload_bytes_per_hour_user=1):  # what this user stored already
        single = await upload(course.http, course.owner, course.project_id, "one.md", chapter)
        batch = await send_batch(course, [("two.md", chapter)])
    assert single.status_code == batch.status_code == 429
    assert "per hour" in single.json()["detail"] and single.headers["Retry-After"]
    with changed_settings(course.app, project_max_bytes=1):
        stored = await upload(course.http, course.owner, course.project_id, "one.md", chapter)
    assert stored.status_code == 413 and "storage limit" in stored.json()["detail"]
    with changed_settings(course.app, project_max_pending_jobs=1):
        many = await send_batch(course, [("a.md", chapter), ("b.md", chapter)])
    assert many.status_code == 429 and "waiting to be indexed" in many.json()["detail"]


async def test_batches_are_the_projects_writers_only(course: Course, make_user: UserFactory) -> None:
    response = await send_batch(course, [("x.md", b"# x\n\ntext\n")], headers=course.student)
    assert response.status_code == 403
    first = await send_batch(course, [("y.md", b"# y\n\ntext\n")])
    batch_id = first.json()["batch_id"]
    outsider = await make_user("course-outsider")
    other_project = await create_project(course.http, outsider, name="elsewhere")
    peek = await course.http.get(f"/projects/{other_project}/documents/batches/{batch_id}", headers=outsider)
    assert peek.status_code == 404  # a batch of a project the caller is not in is no batch of theirs
    added = await send_batch(course, [("z.md", b"# z\n\ntext\n")], batch_id=batch_id)
    assert added.status_code == 202 and added.json()["batch_id"] == batch_id
    progress = await wait_for_batch(course, batch_id)
    assert progress["total"] == 2
