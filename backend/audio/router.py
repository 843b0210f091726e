"""Audio overviews: POST queues one (any member; it is theirs), GETs follow it, read its script and play
or download its recording. An overview is read by its maker and the project's owners only: anyone else
gets 404, as for a project they are not in."""

import logging
import re
from typing import Annotated
from uuid import UUID, uuid4

from fastapi import APIRouter, HTTPException, Query, Request, Response, status

from backend.audio.schemas import AudioAccepted, AudioFormatParam, AudioOut, AudioRequest, VoiceOut, VoicesOut
from backend.deps import DbDep, ProjectDep, QueueDep
from backend.web.paging import PageDep
from core.jobs.specs import AUDIO_OVERVIEW, MakeAudioOverview, enqueue
from core.messages import Text
from core.speech.encode import MEDIA_TYPES
from core.speech.voices import LANGUAGE_NAMES, NoVoice, installed_voices, spoken_language, voice_for
from core.store.content import audio, audio_sources

log = logging.getLogger(__name__)
router = APIRouter(prefix="/projects/{project_id}/audio", tags=["audio"])


def _not_found() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, Text("audio.not_found"))


def _no_voice(error: NoVoice) -> Text:
    """NoVoice's sentence (its English, word for word), with a code to say it in the person's language."""
    return Text("audio.no_voice", language=LANGUAGE_NAMES.get(error.language, error.language))


@router.get("/voices")
async def list_voices(access: ProjectDep) -> VoicesOut:
    """The offline voice installed for each language (None: the app says none is, and offers nothing)."""
    found = installed_voices()
    return VoicesOut(
        language=access.project.language,
        voices=[
            VoiceOut(
                language=language,  # type: ignore[arg-type]
                available=voice is not None,
                voice=voice.label if voice else None,
                reason=None if voice else str(NoVoice(language)),
            )
            for language, voice in found.items()
            if language in LANGUAGE_NAMES
        ],
    )


@router.post("", status_code=status.HTTP_202_ACCEPTED)
async def make_audio_overview(
    body: AudioRequest, access: ProjectDep, db: DbDep, queue: QueueDep
) -> AudioAccepted:
    """Queues an audio overview of the chosen documents (a study guide, or any uploaded ones), in the
    project's language (`auto`: the documents'), by one or two voices. 409 when no voice of that language
    is installed; 404 when a document is not in the project. Progress: GET .../audio/{id}."""
    wanted = list(dict.fromkeys(body.document_ids))
    async with db.connection() as conn:
        documents = await audio_sources.chosen_documents(conn, **access.scope, document_ids=wanted)
    if len(documents) != len(wanted):
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("document.not_found"))
    language = spoken_language(access.project.language, [document.language for document in documents])
    try:
        voice = voice_for(language)
    except NoVoice as error:
        raise HTTPException(status.HTTP_409_CONFLICT, _no_voice(error)) from error
    overview_id = uuid4()
    request = {
        "document_ids": [str(document_id) for document_id in wanted],
        "voices": body.voices,
        "language": language,
        "voice": voice.label,
    }
    async with db.connection() as conn:
        job = await audio.create_audio_job(conn, **access.scope, overview_id=overview_id, request=request)
    if job is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("project.not_found"))
    try:
        await enqueue(queue, AUDIO_OVERVIEW, MakeAudioOverview(access.id, access.user.id, overview_id))
    except Exception as error:  # Redis down: say so, and leave no job that looks like it will run
        log.error("could not enqueue %s: %r", audio.job_id_of(overview_id), error)
        reason = Text("audio.queue_unavailable")
        async with db.connection() as conn:
            await audio.fail_audio_job(conn, **access.scope, overview_id=overview_id, error=reason)
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, reason) from error
    return AudioAccepted(
        id=overview_id,
        job_id=audio.job_id_of(overview_id),
        status=job.status,
        language=language,
        voice=voice.label,
    )


@router.get("")
async def list_audio_overviews(access: ProjectDep, db: DbDep, page: PageDep) -> list[AudioOut]:
    """The caller's overviews (an owner: every member's), newest first, without their scripts."""
    async with db.connection() as conn:
        rows = await audio.list_audio_jobs(conn, **access.scope, page=page)
    return [AudioOut.from_job(row, with_script=False) for row in rows]


@router.get("/{overview_id}")
async def get_audio_overview(overview_id: UUID, access: ProjectDep, db: DbDep) -> AudioOut:
    """The job's progress; once it succeeded, the script: each line's speaker, text, the passages it
    rests on and where it is in the recording."""
    async with db.connection() as conn:
        row = await audio.get_audio_job(conn, **access.scope, overview_id=overview_id)
    if row is None:
        raise _not_found()
    return AudioOut.from_job(row)


_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


@router.get(
    "/{overview_id}/file",
    response_class=Response,
    responses={200: {"content": {"audio/ogg": {}, "audio/mpeg": {}}}, 206: {"description": "a byte range"}},
)
async def get_audio_file(
    overview_id: UUID,
    access: ProjectDep,
    db: DbDep,
    request: Request,
    format: Annotated[AudioFormatParam, Query(description="ogg (Vorbis) or mp3")] = "ogg",
    download: Annotated[bool, Query(description="as an attachment to save, not to play")] = False,
) -> Response:
    """The recording. Byte ranges are served (a player seeks with them)."""
    async with db.connection() as conn:
        data = await audio.audio_file(conn, **access.scope, overview_id=overview_id, fmt=format)
    if data is None:
        raise _not_found()
    disposition = "attachment" if download else "inline"
    headers = {
        "Content-Disposition": f'{disposition}; filename="audio-overview-{overview_id}.{format}"',
        "Accept-Ranges": "bytes",
        "Cache-Control": "private, max-age=3600",
    }
    media_type = MEDIA_TYPES[format]
    wanted = _RANGE.match(request.headers.get("range", "").strip())
    if wanted is None or not (wanted.group(1) or wanted.group(2)):
        return Response(bytes(data), media_type=media_type, headers=headers)
    size = len(data)
    if wanted.group(1):
        start, end = int(wanted.group(1)), int(wanted.group(2) or size - 1)
    else:  # the last N bytes
        start, end = max(0, size - int(wanted.group(2))), size - 1
    end = min(end, size - 1)
    if start >= size or start > end:
        return Response(status_code=416, headers={"Content-Range": f"bytes */{size}"})
    headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    return Response(bytes(data[start : end + 1]), status_code=206, media_type=media_type, headers=headers)
