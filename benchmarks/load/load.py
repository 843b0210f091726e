"""A class at once: N simulated students against `studyai up` on this machine.

Set-up: a teacher indexes three Rust-book chapters, generates two multiple-choice questions and adds
the students as viewers (and as editors of a second project where they upload their notes, so the
course material stays what the solo answers saw); three questions are asked alone (streamed) and
24 searches are timed alone.
Then N students run for D seconds, each looping with a think time of 0.5-2 s over a realistic mix:
searches, streamed questions (one of the three, so each answer can be compared with its solo answer),
quiz attempts, small note uploads, listing projects; one outsider probes the project (must get 404).

Reported per route: count, status codes, p50/p95/max; throughput; queue waits of streamed questions
(time until the first non-`queued` event); errors (anything but a deliberate 429/503 with Retry-After);
whether each finished streamed answer equals its solo answer. A streamed question still waiting when
the run ends may finish during a drain (--drain s, no new requests); one still waiting after it is
cancelled by its client (counted apart: the queue is bounded, not the client's wait).
Targets: 0 errors, search p95 <= 10x solo p50, GET /projects p95 <= 200 ms, streams equal.

    python benchmarks/load/load.py [--clients 50] [--seconds 60] [--model qwen2.5-coder-1.5b-instruct]
"""

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.report import REPORTS, write_report
from benchmarks.stack import RUST, Stack, percentile, studyai_up, upload, wait_jobs

CHAPTERS = [
    "ch04-01-what-is-ownership.md",
    "ch04-02-references-and-borrowing.md",
    "ch05-01-defining-structs.md",
]
SEARCHES = [
    "what happens when a variable goes out of scope",
    "mutable references rules",
    "dangling references",
    "struct update syntax",
    "the String type and the heap",
    "tuple structs without named fields",
    "move semantics of String",
    "borrowing immutable references at once",
]
QUESTIONS = [
    "What happens to a value when its owner goes out of scope?",
    "How many mutable references to a piece of data can you have at a time in one scope?",
    "What is the struct update syntax used for?",
]
MIX = {
    "search": 0.45,
    "qa": 0.10,
    "attempt": 0.15,
    "list_projects": 0.20,
    "upload": 0.05,
    "thread_list": 0.05,
}


@dataclass
class Sample:
    route: str
    status: int
    seconds: float
    started: float
    deliberate: bool = False  # a 429/503 that carried Retry-After
    detail: str = ""
    first_s: float | None = None  # a streamed question: seconds to its first answer event (the soak's p95)


@dataclass
class Results:
    samples: list[Sample] = field(default_factory=list)
    queue_waits: list[float] = field(default_factory=list)
    evidence_waits: list[float] = field(default_factory=list)  # seconds to the `evidence` event
    queued_events: int = 0
    max_position: int = 0
    upload_jobs: list[str] = field(default_factory=list)
    # What the soak checks is not lost at the end: each stored attempt, each uploaded document (id, bytes).
    attempt_ids: list[str] = field(default_factory=list)
    upload_documents: list[tuple[str, int]] = field(default_factory=list)
    streams_equal: int = 0
    streams_differ: list[dict[str, str]] = field(default_factory=list)
    streams_cancelled: int = 0

    def add(self, route: str, response: httpx.Response | None, started: float, detail: str = "") -> None:
        status = response.status_code if response is not None else 0
        deliberate = status in (429, 503) and response is not None and "retry-after" in response.headers
        self.samples.append(
            Sample(
                route, status, time.monotonic() - started, started, deliberate, detail or _detail(response)
            )
        )


def _detail(response: httpx.Response | None) -> str:
    if response is None or response.status_code < 400:
        return ""
    return response.text[:200]


async def stream_question(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    project: str,
    question: str,
    seen: dict[str, Any] | None = None,
) -> tuple[httpx.Response, dict[str, Any]]:
    """One streamed question: the response, and {answer, queued, position, evidence_s, wait_s, error} from its
    events (`seen`, when given, is filled as they arrive, so a cancelled caller still has them)."""
    started = time.monotonic()
    seen = seen if seen is not None else {}
    seen.update({"answer": "", "queued": 0, "position": 0, "evidence_s": None, "wait_s": None, "error": None})
    async with http.stream(
        "POST", f"/projects/{project}/qa", json={"question": question, "stream": True}, headers=headers
    ) as response:
        if response.status_code != 200:
            await response.aread()
            return response, seen
        event = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                if event == "evidence":  # the passages, before the wait for the model
                    seen["evidence_s"] = time.monotonic() - started
                    continue
                if event == "queued":  # `{position: 0}`: its turn came, not one more wait
                    seen["queued"] += data["position"] > 0
                    seen["position"] = max(seen["position"], data["position"])
                    continue
                if seen["wait_s"] is None:
                    seen["wait_s"] = time.monotonic() - started
                if event == "done":
                    seen["answer"] = data.get("answer") or ""
                elif event == "error":
                    seen["error"] = data.get("detail")
    return response, seen


@dataclass
class Course:
    project: str
    scratch: str  # where students upload their notes: the course material stays what it was solo
    teacher: dict[str, str]
    students: list[dict[str, str]]
    outsider: dict[str, str]
    question_ids: list[tuple[str, str]]  # (id, a correct option or any option)
    solo_answers: dict[str, str]
    solo_search_p50: float


async def invite(
    http: httpx.AsyncClient,
    teacher: dict[str, str],
    student: dict[str, str],
    project: str,
    email: str,
    role: str,
) -> None:
    """The teacher invites the student's address with the role and the student accepts (a member is never
    added without their own answer)."""
    (
        await http.post(f"/projects/{project}/members", json={"email": email, "role": role}, headers=teacher)
    ).raise_for_status()
    received = (await http.get("/me/invitations", headers=student)).json()
    [invitation] = [row for row in received if row["project_id"] == project]
    (await http.post(f"/me/invitations/{invitation['id']}/accept", headers=student)).raise_for_status()


async def set_up(stack: Stack, http: httpx.AsyncClient, clients: int) -> Course:
    keys = stack.new_users([f"teacher@{i}.class" if i == 0 else f"s{i}@class" for i in range(clients + 2)])
    teacher, outsider, students = keys[0], keys[1], keys[2:]
    project = (await http.post("/projects", json={"name": "Rust", "language": "en"}, headers=teacher)).json()[
        "id"
    ]
    jobs = [(await upload(http, teacher, project, RUST / name))["job_id"] for name in CHAPTERS]
    finished = await wait_jobs(http, teacher, project, jobs)
    assert all(job["status"] == "succeeded" for job in finished.values()), finished
    scratch = (await http.post("/projects", json={"name": "notes", "language": "en"}, headers=teacher)).json()
    for index, student in enumerate(students):
        email = f"s{index + 2}@class"
        for target, role in ((project, "viewer"), (scratch["id"], "editor")):
            await invite(http, teacher, student, target, email, role)
    generated = await http.post(
        f"/projects/{project}/questions/generate",
        json={"n": 2, "types": ["multiple_choice"]},
        headers=teacher,
        timeout=900,
    )
    question_ids = [(q["id"], q["answer"] or q["options"][0]) for q in generated.json().get("questions", [])]
    # Generated items are pending until a teacher approves them; students see only approved ones.
    for question_id, _ in question_ids:
        approve = {"action": "approve"}
        url = f"/projects/{project}/questions/{question_id}/review"
        (await http.post(url, json=approve, headers=teacher)).raise_for_status()
    # Students here drill the same two questions all run long: lift the per-question attempt limit
    # (default 3), which would otherwise answer their fourth try 409 by design.
    unlimited = {"max_attempts_per_question": None}
    (await http.patch(f"/projects/{project}", json=unlimited, headers=teacher)).raise_for_status()
    print(f"set-up: {len(question_ids)} quiz questions (generate answered {generated.status_code})")
    solo_answers = {}
    for question in QUESTIONS:
        response, seen = await stream_question(http, teacher, project, question)
        assert response.status_code == 200 and seen["error"] is None, (response.status_code, seen)
        solo_answers[question] = seen["answer"]
    timings = []
    for query in SEARCHES * 3:
        started = time.monotonic()
        (
            await http.post(f"/projects/{project}/search", json={"query": query}, headers=teacher)
        ).raise_for_status()
        timings.append(time.monotonic() - started)
    return Course(
        project,
        scratch["id"],
        teacher,
        students,
        outsider,
        question_ids,
        solo_answers,
        percentile(timings, 50),
    )


async def student(
    http: httpx.AsyncClient,
    course: Course,
    headers: dict[str, str],
    deadline: float,
    drain_until: float,
    seed: int,
    out: Results,
) -> None:
    """Acts until the deadline; a streamed question still running then may finish until drain_until."""
    rng = random.Random(seed)
    routes, weights = zip(*MIX.items(), strict=True)
    project = course.project
    while time.monotonic() < deadline:
        await asyncio.sleep(rng.uniform(0.5, 2.0))
        route = rng.choices(routes, weights)[0]
        if route == "attempt" and not course.question_ids:
            route = "search"
        started = time.monotonic()
        try:
            if route == "search":
                body = {"query": rng.choice(SEARCHES)}
                out.add(
                    route, await http.post(f"/projects/{project}/search", json=body, headers=headers), started
                )
            elif route == "list_projects":
                out.add(route, await http.get("/projects", headers=headers), started)
            elif route == "thread_list":
                out.add(route, await http.get(f"/projects/{project}/qa/threads", headers=headers), started)
            elif route == "attempt":
                question_id, option = rng.choice(course.question_ids)
                response = await http.post(
                    f"/projects/{project}/questions/{question_id}/attempts",
                    json={"answer": option},
                    headers=headers,
                )
                out.add(route, response, started)
                if response.status_code == 201:
                    out.attempt_ids.append(response.json()["id"])
            elif route == "upload":
                text = f"# Notes {seed}-{started}\n\nOwnership notes of student {seed}: moves, borrows.\n"
                response = await http.post(
                    f"/projects/{course.scratch}/documents",
                    files={"file": ("notes.md", text.encode())},
                    headers=headers,
                )
                out.add(route, response, started)
                if response.status_code == 202:
                    out.upload_jobs.append(response.json()["job_id"])
                    out.upload_documents.append((response.json()["document_id"], len(text.encode())))
            else:
                question = rng.choice(QUESTIONS)
                seen: dict[str, Any] = {}
                try:
                    response, _ = await asyncio.wait_for(
                        stream_question(http, headers, project, question, seen),
                        timeout=max(1.0, drain_until - started),
                    )
                finally:
                    out.queued_events += seen.get("queued", 0)
                    out.max_position = max(out.max_position, seen.get("position", 0))
                failed = seen["error"] is not None
                out.add("qa_stream", response, started, detail=seen["error"] or "")
                out.samples[-1].first_s = seen["wait_s"]
                if failed:
                    out.samples[-1].status = 599  # an error event inside a 200 stream is an error
                elif response.status_code == 200:
                    out.queue_waits.append(seen["wait_s"] or 0.0)
                    if seen["evidence_s"] is not None:
                        out.evidence_waits.append(seen["evidence_s"])
                    if seen["answer"] == course.solo_answers[question]:
                        out.streams_equal += 1
                    else:
                        out.streams_differ.append(
                            {"solo": course.solo_answers[question], "load": seen["answer"]}
                        )
        except TimeoutError:
            out.streams_cancelled += 1  # still queued when the drain ends: the client gives up
        except httpx.HTTPError as error:
            out.samples.append(Sample(route, 0, time.monotonic() - started, started, detail=repr(error)))


async def outsider(http: httpx.AsyncClient, course: Course, deadline: float, out: Results) -> None:
    while time.monotonic() < deadline:
        started = time.monotonic()
        response = await http.post(
            f"/projects/{course.project}/search", json={"query": "ownership"}, headers=course.outsider
        )
        sample_route = "outsider_probe"
        out.add(sample_route, response, started)
        if response.status_code == 404:
            out.samples[-1].status = 200  # the expected answer; anything else stays an error
        await asyncio.sleep(1.0)


def summarise(
    out: Results, course: Course, seconds: float, jobs: dict[str, dict[str, Any]]
) -> tuple[str, dict[str, Any]]:
    by_route: dict[str, list[Sample]] = defaultdict(list)
    for sample in out.samples:
        by_route[sample.route].append(sample)
    lines = [
        "| route | n | 2xx | 429 | 503 | errors | p50 ms | p95 ms | max ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    figures: dict[str, Any] = {"routes": {}}
    errors = []
    for route, samples in sorted(by_route.items()):
        ok = [s for s in samples if 200 <= s.status < 300]
        bad = [s for s in samples if not (200 <= s.status < 300 or s.deliberate)]
        errors += bad
        times = [s.seconds * 1000 for s in ok]
        row = {
            "n": len(samples),
            "ok": len(ok),
            "429": sum(s.status == 429 for s in samples),
            "503": sum(s.status == 503 for s in samples),
            "errors": len(bad),
            "p50": percentile(times, 50),
            "p95": percentile(times, 95),
            "max": max(times, default=float("nan")),
        }
        figures["routes"][route] = row
        lines.append(
            f"| {route} | {row['n']} | {row['ok']} | {row['429']} | {row['503']} | {row['errors']} |"
            f" {row['p50']:.0f} | {row['p95']:.0f} | {row['max']:.0f} |"
        )
    search_p95 = figures["routes"].get("search", {}).get("p95", float("nan"))
    projects_p95 = figures["routes"].get("list_projects", {}).get("p95", float("nan"))
    ratio = search_p95 / (course.solo_search_p50 * 1000)
    per_minute, span = answers_per_minute(out)
    figures.update(
        {
            "requests": len(out.samples),
            "throughput_rps": len(out.samples) / seconds,
            "errors": len(errors),
            "solo_search_p50_ms": course.solo_search_p50 * 1000,
            "search_p95_over_solo_p50": ratio,
            "list_projects_p95_ms": projects_p95,
            "answers_per_minute": per_minute,
            "answers_span_s": span,
            "queue_wait_p50_s": percentile(out.queue_waits, 50),
            "queue_wait_p95_s": percentile(out.queue_waits, 95),
            "evidence_p50_s": percentile(out.evidence_waits, 50),
            "evidence_p95_s": percentile(out.evidence_waits, 95),
            "queued_events": out.queued_events,
            "max_queue_position": out.max_position,
            "streams_equal": out.streams_equal,
            "streams_differ": len(out.streams_differ),
            "streams_cancelled_at_end": out.streams_cancelled,
            "uploads_succeeded": sum(job["status"] == "succeeded" for job in jobs.values()),
            "uploads_failed": sum(job["status"] == "failed" for job in jobs.values()),
        }
    )
    lines += [
        "",
        f"- requests {len(out.samples)} in {seconds:.0f} s ({figures['throughput_rps']:.1f}/s);"
        f" errors (not a deliberate 429/503 with Retry-After): **{len(errors)}**",
        f"- search p95 under load / solo p50: {search_p95:.0f} / {course.solo_search_p50 * 1000:.0f} ms ="
        f" **{ratio:.1f}x** (target <= 10x); GET /projects p95 **{projects_p95:.0f} ms** (target <= 200)",
        f"- streamed answers equal to their solo answer: **{out.streams_equal}** of"
        f" {out.streams_equal + len(out.streams_differ)};"
        f" still waiting after the drain (cancelled by the client): {out.streams_cancelled}",
        f"- streamed answers finished: {len(out.queue_waits)} in {span:.0f} s from the start of the run ="
        f" **{per_minute:.1f} per minute**",
        f"- queue wait until the first answer event: p50 {figures['queue_wait_p50_s']:.1f} s,"
        f" p95 {figures['queue_wait_p95_s']:.1f} s; `queued` events received: {out.queued_events},"
        f" deepest queue position seen: {out.max_position}",
        f"- time to the first evidence (the passages, sent before the wait for the model):"
        f" p50 {_seconds(figures['evidence_p50_s'])}, p95 **{_seconds(figures['evidence_p95_s'])}**"
        f" over {len(out.evidence_waits)} streamed questions (target p95 <= 3 s)",
        f"- uploads during the run indexed: {figures['uploads_succeeded']} of {len(out.upload_jobs)}"
        f" succeeded ({figures['uploads_failed']} failed)",
    ]
    for sample in errors[:10]:
        lines.append(f"  - error: {sample.route} {sample.status} {sample.detail}")
    for differ in out.streams_differ[:3]:
        lines.append(f"  - differs: solo {differ['solo'][:120]!r} vs load {differ['load'][:120]!r}")
    return "\n".join(lines), figures


def answers_per_minute(out: Results) -> tuple[float, float]:
    """Streamed answers finished without error per minute, from the run's first request to the last
    answer's end (the drain included: the model's throughput, not the clients' deadline)."""
    start = min((s.started for s in out.samples), default=0.0)
    done = [s for s in out.samples if s.route == "qa_stream" and 200 <= s.status < 300]
    span = max((s.started + s.seconds - start for s in done), default=0.0)
    return (60 * len(done) / span if span else 0.0), span


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def plot(out: Results, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    start = min((s.started for s in out.samples), default=0.0)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for route in sorted({s.route for s in out.samples}):
        points = [(s.started - start, s.seconds * 1000) for s in out.samples if s.route == route]
        ax.scatter(*zip(*points, strict=True), s=8, label=route)
    ax.set_yscale("log")
    ax.set_xlabel("seconds into the run (request start)")
    ax.set_ylabel("latency, ms (log)")
    ax.set_title("studyai up under a simulated class")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


async def run(
    stack: Stack, clients: int, seconds: float, drain: float, *, bases: list[str] | None = None
) -> tuple[str, dict[str, Any], Results]:
    """The class against `stack`; with `bases` (several API replicas), student i talks to replica i mod n,
    as a load balancer would spread them (set-up and solo answers go through the first)."""
    limits = httpx.Limits(max_connections=clients + 10, max_keepalive_connections=clients + 10)
    replicas = [
        httpx.AsyncClient(base_url=base, timeout=600, limits=limits) for base in (bases or [stack.base])
    ]
    http = replicas[0]
    try:
        course = await set_up(stack, http, clients)
        print(
            f"solo search p50 {course.solo_search_p50 * 1000:.0f} ms;"
            f" running {clients} clients {seconds:.0f} s over {len(replicas)} API process(es)"
        )
        out = Results()
        deadline = time.monotonic() + seconds
        tasks = [
            student(replicas[i % len(replicas)], course, headers, deadline, deadline + drain, i, out)
            for i, headers in enumerate(course.students)
        ]
        await asyncio.gather(*tasks, outsider(http, course, deadline, out))
        jobs = await wait_jobs(http, course.teacher, course.scratch, out.upload_jobs, timeout=600)
        text, figures = summarise(out, course, seconds, jobs)
        return text, figures, out
    finally:
        for client in replicas:
            await client.aclose()


def stack_arguments(description: str | None, *, clients: int) -> argparse.ArgumentParser:
    """The options of a run against `studyai up` (here and soak.py): how many clients, the chat model, how
    long a question still streaming at the end may take, and the data directory."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=clients)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument(
        "--drain", type=float, default=240, help="seconds a streamed question running at the end may finish"
    )
    parser.add_argument("--workdir", type=Path, default=None, help="data dir (default: a temporary one)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = stack_arguments(__doc__, clients=50)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="studyai-load-") as scratch:
        data_dir = args.workdir or Path(scratch) / "data"
        with studyai_up(data_dir, model=args.model) as stack:
            text, figures, out = asyncio.run(run(stack, args.clients, args.seconds, args.drain))
    header = (
        f"# Load: {args.clients} clients for {args.seconds:.0f} s, `studyai up` ({args.model})\n\n"
        f"{datetime.now().isoformat(timespec='seconds')}; "
        f"`python benchmarks/load/load.py --clients {args.clients} --seconds {args.seconds:.0f}"
        f" --drain {args.drain:.0f} --model {args.model}`\n\n"
    )
    write_report(REPORTS / "load.md", header + text, data=figures)
    plot(out, REPORTS / "load.png")
    print(text)


if __name__ == "__main__":
    main()
