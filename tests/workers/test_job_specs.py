"""Job specs on the wire: the arguments arq stores are what producers always stored (ids as strings, in
field order; a note's kind by keyword), so jobs queued before a deploy still run after it; every spec is
served by the Worker of its queue."""

import uuid
from typing import Any

from core.jobs.specs import (
    INDEX_DOCUMENT,
    JUDGE_ANSWER,
    OPTIMIZE_STUDY,
    WRITE_NOTE,
    IndexDocument,
    JudgeAnswer,
    OptimizeStudy,
    WriteNote,
    enqueue,
)
from core.runtime.services import ServiceUrls
from core.settings import Settings
from workers.main import QUEUES, build_worker


class RecordingQueue:
    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    async def enqueue_job(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append((args, kwargs))


async def test_enqueue_stores_the_arguments_as_before_and_they_decode_to_the_same_values() -> None:
    project, user, document, plan, query = (uuid.uuid4() for _ in range(5))
    queue = RecordingQueue()
    index = IndexDocument(project, document, 3)
    note = WriteNote(project, user, "note:1", plan, "ownership", 2, "faq")
    judge = JudgeAnswer(project, user, query)
    fit = OptimizeStudy(project, user)
    kinds: list[tuple[Any, Any]] = [(INDEX_DOCUMENT, index), (WRITE_NOTE, note), (JUDGE_ANSWER, judge)]
    for spec, args in [*kinds, (OPTIMIZE_STUDY, fit)]:
        await enqueue(queue, spec, args)  # type: ignore[arg-type]  # records what arq would store
        positional, keywords = spec.encode(args)
        assert spec.decode(positional, keywords) == args
    assert queue.calls == [
        (
            ("index_document", str(project), str(document), 3),
            {"_job_id": f"index:{document}:3", "_queue_name": "studyai:queue"},
        ),
        (
            ("write_note", str(project), str(user), "note:1", str(plan), "ownership", 2),
            {"kind": "faq", "_job_id": "note:1", "_queue_name": "studyai:agents"},
        ),
        (
            ("judge_answer", str(project), str(user), str(query)),
            {"_job_id": f"judge:{query}", "_queue_name": "studyai:agents"},
        ),
        (
            ("optimize_study_parameters", str(project), str(user)),
            {"_job_id": f"study-optimize:{project}:{user}", "_queue_name": "studyai:queue"},
        ),
    ]
    # A note queued before its kind existed (positional arguments only) runs as a note.
    old = WRITE_NOTE.decode((str(project), str(user), "note:2", None, "topic", 4), {})
    assert old == WriteNote(project, user, "note:2", None, "topic", 4, "note")


def test_every_spec_is_served_on_its_queue(settings: Settings) -> None:
    urls = ServiceUrls("postgresql://unused", "redis://localhost:1", None)
    served = {queue: set(build_worker(settings, urls, queue=queue).functions) for queue in QUEUES}
    for spec in (INDEX_DOCUMENT, WRITE_NOTE, JUDGE_ANSWER, OPTIMIZE_STUDY):
        assert spec.name in served[spec.queue], spec.name
