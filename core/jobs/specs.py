"""Every job kind as a typed spec (its arq name, its queue, its argument dataclass, its job id), and the
one `enqueue` that the API and the workers both use. The API imports this module, never the jobs' code.

Two queues, each served by its own worker processes: indexing never waits behind a model-bound job.
On the wire the arguments stay what they always were (ids as strings, in field order), so jobs queued
before a deploy still run after it."""

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar
from uuid import UUID

from arq.connections import ArqRedis

from core.store.content.audio import job_id_of as audio_job_id
from core.store.runs.jobs import index_job_id

Queue = Literal["index", "agents"]
QUEUES: tuple[Queue, ...] = ("index", "agents")
INDEX_QUEUE = "studyai:queue"  # uploads, edits, reindexing (the name predates the split: queued jobs survive)
AGENT_QUEUE = "studyai:agents"  # notes and groundedness judging: model-bound, minutes long
QUEUE_NAMES: dict[Queue, str] = {"index": INDEX_QUEUE, "agents": AGENT_QUEUE}

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

A = TypeVar("A", bound="DataclassInstance")
WireValue = str | int | None


@dataclass(frozen=True)
class IndexDocument:
    """Parse, chunk, embed and store one version of a document."""

    project_id: UUID
    document_id: UUID
    version: int


@dataclass(frozen=True)
class WriteNote:
    """A Content Writer note (or study guide, FAQ, glossary), by its jobs row."""

    project_id: UUID
    user_id: UUID
    job_id: str  # the jobs row, which holds the request and the result
    plan_id: UUID | None = None
    topic: str | None = None
    max_sections: int | None = None  # None: the planner's default
    kind: str = "note"  # agents.writer.kinds.Kind


@dataclass(frozen=True)
class MakeAudioOverview:
    """An audio overview (script, voices, recording), by its jobs row, which holds the request."""

    project_id: UUID
    user_id: UUID
    overview_id: UUID  # the job is 'audio:{overview_id}'


@dataclass(frozen=True)
class JudgeAnswer:
    """A sampled QA answer's groundedness, by its query_history row."""

    project_id: UUID
    user_id: UUID
    query_id: UUID


@dataclass(frozen=True)
class OptimizeStudy:
    """A student's FSRS parameters fitted to their own reviews."""

    project_id: UUID
    user_id: UUID


@dataclass(frozen=True)
class PurgeHistory:
    """The retention windows of every table holding a student's text (a cron job: no arguments)."""


@dataclass(frozen=True)
class ScheduledBackup:
    """A look at the backup schedule, BACKUP_DIR (a cron job: no arguments)."""


@dataclass(frozen=True)
class JobSpec(Generic[A]):
    name: str  # the arq function name: a queued job finds its code by it
    queue: Queue
    args: type[A]  # a frozen dataclass
    job_id: Callable[[A], str]  # one job per id: enqueueing it twice runs it once
    keywords: frozenset[str] = frozenset()  # fields passed by keyword on the wire (as they always were)

    @property
    def queue_name(self) -> str:
        return QUEUE_NAMES[self.queue]

    def encode(self, args: A) -> tuple[tuple[WireValue, ...], dict[str, WireValue]]:
        """arq's positional and keyword arguments for `args`: ids as strings."""
        values = [(f.name, _to_wire(getattr(args, f.name))) for f in dataclasses.fields(self.args)]
        positional = tuple(value for name, value in values if name not in self.keywords)
        return positional, {name: value for name, value in values if name in self.keywords}

    def decode(self, positional: tuple[object, ...], keywords: dict[str, object]) -> A:
        """The arguments arq hands a job function, as the dataclass (ids back to UUIDs)."""
        fields = dataclasses.fields(self.args)
        if len(positional) > len(fields):
            raise TypeError(f"{self.name} takes {len(fields)} arguments, got {len(positional)}")
        given = {**{field.name: value for field, value in zip(fields, positional, strict=False)}, **keywords}
        hints = typing.get_type_hints(self.args)
        values = {name: _from_wire(hints[name], value) for name, value in given.items()}
        return self.args(**values)


def _to_wire(value: object) -> WireValue:
    if isinstance(value, UUID):
        return str(value)
    if value is None or isinstance(value, str | int):
        return value
    raise TypeError(f"a job argument must be a UUID, str, int or None, not {type(value).__name__}")


def _from_wire(annotation: object, value: object) -> object:
    if isinstance(value, str) and _is_uuid(annotation):
        return UUID(value)
    return value


def _is_uuid(annotation: object) -> bool:
    if annotation is UUID:
        return True
    return isinstance(annotation, types.UnionType) and UUID in typing.get_args(annotation)


INDEX_DOCUMENT = JobSpec(
    "index_document",
    "index",
    IndexDocument,
    job_id=lambda args: index_job_id(args.document_id, args.version),
)
WRITE_NOTE = JobSpec(
    "write_note", "agents", WriteNote, job_id=lambda args: args.job_id, keywords=frozenset({"kind"})
)
AUDIO_OVERVIEW = JobSpec(
    "make_audio_overview", "agents", MakeAudioOverview, job_id=lambda args: audio_job_id(args.overview_id)
)
JUDGE_ANSWER = JobSpec("judge_answer", "agents", JudgeAnswer, job_id=lambda args: f"judge:{args.query_id}")
# CPU seconds, not model-bound: on the index queue, which every deployment runs.
OPTIMIZE_STUDY = JobSpec(
    "optimize_study_parameters",
    "index",
    OptimizeStudy,
    job_id=lambda args: f"study-optimize:{args.project_id}:{args.user_id}",
)
# Hourly and at worker start-up (a cron job, unique across workers): quick SQL, on the index queue.
PURGE_QUERY_HISTORY = JobSpec(
    "purge_query_history", "index", PurgeHistory, job_id=lambda args: "cron:purge_query_history"
)
# Hourly and at worker start-up, on the index queue (every deployment runs it): writes a backup only
# when the newest is BACKUP_INTERVAL_HOURS old.
SCHEDULED_BACKUP = JobSpec(
    "scheduled_backup", "index", ScheduledBackup, job_id=lambda args: "cron:scheduled_backup"
)


async def enqueue(redis: ArqRedis, spec: JobSpec[A], args: A) -> None:
    """Queues one job on its spec's queue under its spec's job id; raises when Redis does (the caller
    decides what a lost job means)."""
    positional, named = spec.encode(args)
    keywords: dict[str, Any] = dict(named)  # arq's own keyword options (_job_id, …) are typed apart
    await redis.enqueue_job(
        spec.name, *positional, _job_id=spec.job_id(args), _queue_name=spec.queue_name, **keywords
    )
