"""Mastery per topic for one student, and the class's aggregates, from rows already loaded (pure).

Rows are the store's records (core/store/study/study.py): an item's `section_path`, the student's card and
their attempt scores (`attempt_scores` / `scores`). The model is core/study/mastery.py."""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from fsrs import Scheduler

from core.store.study.study import ClassCard, ClassItem, StudyItem
from core.study.mastery import histogram, topic_mastery, topic_of
from core.study.scheduler import retrievability, stored_card

NEXT_ITEMS = 3
MOST_FAILED = 3


@dataclass
class TopicState:
    items: list[StudyItem] = field(default_factory=list)
    memory: dict[UUID, float] = field(default_factory=dict)  # item id -> retrievability now (studied)
    scores: list[float] = field(default_factory=list)


def _group(
    rows: Iterable[StudyItem], scheduler: Scheduler, now: datetime
) -> dict[tuple[str, ...], TopicState]:
    topics: dict[tuple[str, ...], TopicState] = defaultdict(TopicState)
    for row in rows:
        topic = topics[topic_of(row.section_path)]
        topic.items.append(row)
        stored = stored_card(row.card)
        if stored is not None:
            topic.memory[row.id] = retrievability(scheduler, stored.card, now)
        topic.scores.extend(float(s) for s in row.attempt_scores or ())
    return topics


def student_topics(rows: Sequence[StudyItem], scheduler: Scheduler, now: datetime) -> list[dict[str, Any]]:
    """Weakest topic first; next_items: the topic's items with the lowest retrievability now (an item
    never studied counts 0), in bank order among equals."""
    out = []
    for topic, state in _group(rows, scheduler, now).items():
        ordered = sorted(state.items, key=lambda r: state.memory.get(r.id, 0.0))
        out.append(
            {
                "topic": list(topic),
                "mastery": topic_mastery(list(state.memory.values()), len(state.items), state.scores),
                "items": len(state.items),
                "studied": len(state.memory),
                "attempts": len(state.scores),
                "next_items": [
                    {
                        "question_id": r.id,
                        "question": r.question,
                        "type": r.type,
                        "source_chunk_ids": list(r.source_chunk_ids or []),
                    }
                    for r in ordered[:NEXT_ITEMS]
                ],
            }
        )
    return sorted(out, key=lambda t: (t["mastery"], t["topic"]))


def class_topics(
    items: Sequence[ClassItem],
    activity: Sequence[ClassCard],
    scheduler: Scheduler,
    now: datetime,
) -> dict[str, Any]:
    """`items`: the class's items with review counts; `activity`: (student, item) rows with card columns
    and attempt `scores`. Mastery per student per topic as for a student (fsrs's default parameters:
    the class view compares students on one scale); only students with activity in a topic count."""
    topic_items: dict[tuple[str, ...], list[ClassItem]] = defaultdict(list)
    topic_by_item: dict[UUID, tuple[str, ...]] = {}
    for item in items:
        topic = topic_of(item.section_path)
        topic_items[topic].append(item)
        topic_by_item[item.id] = topic
    per_student: dict[tuple[int, tuple[str, ...]], TopicState] = defaultdict(TopicState)
    for row in activity:
        item_topic = topic_by_item.get(row.question_id)
        if item_topic is None:
            continue
        state = per_student[(row.student, item_topic)]
        stored = stored_card(row.card)
        if stored is not None:
            state.memory[row.question_id] = retrievability(scheduler, stored.card, now)
        state.scores.extend(float(s) for s in row.scores or ())
    students = {student for student, _ in per_student}
    out = []
    for topic, members in topic_items.items():
        values = [
            topic_mastery(list(s.memory.values()), len(members), s.scores)
            for (_, t), s in per_student.items()
            if t == topic
        ]
        failed = sorted((i for i in members if i.failures), key=lambda i: (-i.failures, -i.attempts))
        out.append(
            {
                "topic": list(topic),
                "students_studied": len(values),
                "mean_mastery": sum(values) / len(values) if values else 0.0,
                "histogram": histogram(values),
                "most_failed": [
                    {
                        "question_id": i.id,
                        "question": i.question,
                        "failures": int(i.failures),
                        "attempts": int(i.attempts),
                    }
                    for i in failed[:MOST_FAILED]
                ],
            }
        )
    out.sort(key=lambda t: (t["mean_mastery"] if t["students_studied"] else 2.0, t["topic"]))
    return {"students": len(students), "topics": out}
