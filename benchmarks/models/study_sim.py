"""A simulated class studying for an exam: FSRS (the product's queue) against fixed intervals and no
scheduling. Prints a markdown table and writes benchmarks/reports/study_sim.md and .png.

Ground truth: each learner's memory follows FSRS's model with the learner's own parameters (fsrs's
defaults with lognormal noise on the initial stabilities w0-w3, the recall stability growth w8 and the
forgetting decay w20) and each item has its own difficulty (a lognormal factor on elapsed time):
recall at time t after the last review is R = (1 + F·e·t/S)^-d, with t in fractional days. A review
succeeds with probability R; the learner then rates Good (or Again on a failure); a first exposure is
Again with probability 0.3 (the item was unknown). The learner's true memory is updated by their own
true model with that rating, whatever strategy chose the review.

Each learner meets 20 new items a day (all 300 by day 15) in a session at 18:00 on days 0-59; the exam
is day 60 at 00:00. Retention at the exam = the mean true recall probability over all 300 items;
"mean recall days 15-59" averages the same at each session once all items are met (what a student
holds during the term).

Strategies:
- fsrs r=…: the product's queue (core/study/queue.order_queue, exam mode on) and scheduler
  (core/study/scheduler.review, fsrs's default parameters, the given desired retention); a session
  goes round again while a learning step (10 min: core/study/scheduler.LEARNING_STEPS) comes due
  within the next half hour. "fsrs's 2 learning steps" rows use fsrs's own (1 min, 10 min).
- fsrs exam r=0.9 term=… cap N/day: the same queue with exam mode's schedule (core/study/exam.py: each
  card's plan computed once per review, spread over the cards once a day): a card is due at the earlier of
  its term-time date (fsrs's retrievability falling to the term retention) and its final review, a day
  of its window (the days before the exam at which a Good review leaves fsrs's predicted recall at the
  exam >= 0.9), at most N final reviews a day, filled from the exam backwards; a card already at 0.9 at
  the exam is not reviewed before it. The product's defaults (EXAM_TERM_RETENTION,
  EXAM_DAILY_REVIEW_MAX) were chosen with `--tune` on seed 7 (not the report's).
- fsrs exam … latest day / earliest day: no cap, each card's final review on the last day of its window
  (the day before the exam: the previous plan, at its term retention 0.45) or on the first.
- fixed k d (k = 2, 4, 7, 14): every introduced item again every k days, whatever the outcome.
- random: each day the same number of reviews as fsrs r=0.9 spent per day (mean), on random items
  already introduced.
- cram: the same total as fsrs r=0.9, spent in the last 5 days on random introduced items.

    python benchmarks/models/study_sim.py                  # 200 learners, 300 items, 60 days
    python benchmarks/models/study_sim.py --learners 20    # quick look
    # exam mode:
    python benchmarks/models/study_sim.py --seed 7 --learners 16 --tune 0.45:30 0.6:30 0.45:latest"""

import argparse
import itertools
import math
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fsrs import Card, Rating, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.report import REPORTS, write_report
from core.observability import timing
from core.study.exam import (
    EXAM_DAILY_REVIEW_MAX,
    EXAM_TERM_RETENTION,
    CardPlan,
    FinalDay,
    card_plan,
    planned_due,
    spread_final_reviews,
)
from core.study.queue import Candidate, order_queue
from core.study.scheduler import FSRS_LEARNING_STEPS, LEARNING_STEPS, StoredCard, make_scheduler, review
from evals.tables import table_lines

START = datetime(2026, 1, 5, tzinfo=UTC)
NEW_PER_DAY = 20
TARGET = 0.9
SESSION_HOUR = 18
SECONDS_PER_REVIEW = 15
LAST_DAY_TERM = 0.45  # the last-day plan's term retention, as tuned for it on seed 7


@dataclass
class Learner:
    """A learner's true memory: their own FSRS model, and one true card per item met."""

    truth: Scheduler
    item_factor: list[float]
    rng: random.Random
    cards: dict[int, Card] = field(default_factory=dict)
    reviews: int = 0
    term: list[float] = field(default_factory=list)  # mean recall at each session from day 15 on
    day_starts: list[int] = field(default_factory=list)  # the review count at the start of each day

    def sample(self, day: int, items: int) -> None:
        self.day_starts.append(self.reviews)
        if day >= 15:  # every item has been met by then
            self.term.append(self.exam_retention(items, session_start(day)))

    def recall(self, item: int, at: datetime) -> float:
        card = self.cards.get(item)
        if card is None or card.last_review is None or card.stability is None:
            return 0.0
        days = max(0.0, (at - card.last_review).total_seconds() / 86400) * self.item_factor[item]
        decay = -self.truth.parameters[20]
        factor = 0.9 ** (1 / decay) - 1
        return (1 + factor * days / card.stability) ** decay

    def study(self, item: int, at: datetime) -> Rating:
        """One review (or first exposure) of `item` at `at`: the outcome, and the true memory's update."""
        if item in self.cards:
            rating = Rating.Good if self.rng.random() < self.recall(item, at) else Rating.Again
        else:
            rating = Rating.Again if self.rng.random() < 0.3 else Rating.Good
        card = self.cards.get(item) or Card(card_id=item, due=at)
        self.cards[item], _ = self.truth.review_card(card, rating, review_datetime=at)
        self.reviews += 1
        return rating

    def exam_retention(self, items: int, exam: datetime) -> float:
        return sum(self.recall(i, exam) for i in range(items)) / items

    def busiest_day(self) -> int:
        counts = [*self.day_starts, self.reviews]
        return max(b - a for a, b in itertools.pairwise(counts))

    def last_days(self, days: int) -> int:
        """Reviews in the last `days` sessions before the exam."""
        return self.reviews - self.day_starts[-days]


def make_learner(seed: int, item_factor: list[float]) -> Learner:
    rng = random.Random(seed)
    params = list(DEFAULT_PARAMETERS)
    for index, sigma in ((0, 0.5), (1, 0.5), (2, 0.5), (3, 0.5), (8, 0.15), (20, 0.2)):
        value = params[index] * math.exp(rng.gauss(0, sigma))
        params[index] = min(UPPER_BOUNDS_PARAMETERS[index], max(LOWER_BOUNDS_PARAMETERS[index], value))
    truth = Scheduler(parameters=params, enable_fuzzing=False)
    return Learner(truth=truth, item_factor=item_factor, rng=rng)


def session_start(day: int) -> datetime:
    return START + timedelta(days=day, hours=SESSION_HOUR)


def run_fsrs(
    learner: Learner,
    items: int,
    days: int,
    retention: float,
    term_retention: float | None = None,
    final: FinalDay | int = EXAM_DAILY_REVIEW_MAX or "latest",
    learning_steps: int = len(LEARNING_STEPS),
) -> None:
    """The product's queue; with `term_retention`, exam mode's schedule (core/study/exam.py) too: with
    `final` a daily cap, the product's plan (exam_plan: each card's plan computed once per review, spread
    once a day); "latest"/"earliest", one card's plan on its own (planned_due) on that day of its window."""
    steps = FSRS_LEARNING_STEPS[len(FSRS_LEARNING_STEPS) - learning_steps :] if learning_steps else ()
    scheduler = make_scheduler(desired_retention=retention, learning_steps=steps)
    exam = START + timedelta(days=days)
    cards: dict[int, StoredCard] = {}
    plans: dict[int, CardPlan] = {}  # the capped plan's per-card part, computed once per review
    planned: dict[int, datetime] = {}  # exam mode's due dates
    for day in range(days):
        learner.sample(day, items)
        now, introduced_today = session_start(day), 0
        if isinstance(final, int):
            planned = spread_final_reviews(plans, exam_at=exam, now=now, daily_max=final)
        for _ in range(12):  # rounds of one session: learning steps come due again within it
            candidates = [Candidate(i, cards.get(i), planned.get(i)) for i in range(items)]
            queue = order_queue(
                candidates,
                scheduler=scheduler,
                now=now,
                new_budget_left=NEW_PER_DAY - introduced_today,
                limit=10_000,
                exam_at=exam,
            )
            for candidate in queue:
                item = candidate.item_id
                introduced_today += candidate.card is None
                rating = learner.study(item, now)
                cards[item], _ = review(scheduler, cards.get(item), rating, now)
                if term_retention is not None and isinstance(final, int):
                    plans[item] = card_plan(
                        scheduler, cards[item].card, exam_at=exam, now=now, term_retention=term_retention
                    )  # until tomorrow's spread: the uncapped plan (never today again but a step)
                    planned[item] = spread_final_reviews(
                        {item: plans[item]}, exam_at=exam, now=now, daily_max=None
                    )[item]
                elif term_retention is not None:
                    planned[item] = planned_due(
                        scheduler,
                        cards[item].card,
                        exam_at=exam,
                        now=now,
                        term_retention=term_retention,
                        final_day=final,
                    )
                now += timedelta(seconds=SECONDS_PER_REVIEW)
            dues = planned.values() if term_retention is not None else (c.card.due for c in cards.values())
            upcoming = [due for due in dues if due > now]
            soon = min(upcoming, default=None)
            if soon is None or soon - now > timedelta(minutes=30):
                break
            now = max(now, soon)


def introduce(learner: Learner, day: int, items: int, at: datetime) -> list[int]:
    new = list(range(day * NEW_PER_DAY, min(items, (day + 1) * NEW_PER_DAY)))
    for item in new:
        learner.study(item, at)
    return new


def run_fixed(learner: Learner, items: int, days: int, interval: int) -> None:
    met: dict[int, int] = {}  # item -> day met
    for day in range(days):
        learner.sample(day, items)
        now = session_start(day)
        for item, first in met.items():
            if (day - first) % interval == 0:
                learner.study(item, now)
                now += timedelta(seconds=SECONDS_PER_REVIEW)
        for item in introduce(learner, day, items, now):
            met[item] = day


def run_random(learner: Learner, items: int, days: int, per_day: list[int]) -> None:
    met: list[int] = []
    for day in range(days):
        learner.sample(day, items)
        now = session_start(day)
        for item in (learner.rng.choice(met) for _ in range(per_day[day])) if met else ():
            learner.study(item, now)
            now += timedelta(seconds=SECONDS_PER_REVIEW)
        met.extend(introduce(learner, day, items, now))


@dataclass
class Result:
    name: str
    retention: list[float] = field(default_factory=list)
    reviews: list[int] = field(default_factory=list)
    term: list[float] = field(default_factory=list)
    busiest: list[int] = field(default_factory=list)
    last3: list[int] = field(default_factory=list)

    def add(self, learner: Learner, items: int, exam: datetime) -> None:
        self.retention.append(learner.exam_retention(items, exam))
        self.reviews.append(learner.reviews)
        self.term.append(Result.mean(learner.term))
        self.busiest.append(learner.busiest_day())
        self.last3.append(learner.last_days(3))

    @staticmethod
    def mean(values: list[float] | list[int]) -> float:
        return sum(values) / len(values)

    @property
    def reached(self) -> float:
        return sum(r >= TARGET for r in self.retention) / len(self.retention)


def _run_all(
    name: str, run: Callable[[Learner], None], seeds: list[int], item_factor: list[float], exam: datetime
) -> Result:
    result = Result(name)
    for learner_seed in seeds:
        learner = make_learner(learner_seed, item_factor)
        run(learner)
        result.add(learner, len(item_factor), exam)
    return result


# Exam mode: term retention, final-review rule or daily cap, learning steps (2: fsrs's 1 and 10 min,
# 1: the 10 min step only, the product's LEARNING_STEPS; 0: none).
Variant = tuple[float, FinalDay | int, int]
PRODUCT: Variant = (EXAM_TERM_RETENTION, EXAM_DAILY_REVIEW_MAX or "latest", len(LEARNING_STEPS))


def exam_name(variant: Variant) -> str:
    term, final, steps = variant
    rule = f"cap {final}/day" if isinstance(final, int) else f"{final} day"
    if steps == len(LEARNING_STEPS):
        return f"fsrs exam r=0.9 term={term:g} {rule}"
    owner = "fsrs's " if steps == len(FSRS_LEARNING_STEPS) else ""
    return f"fsrs exam r=0.9 term={term:g} {rule} with {owner}{steps} learning steps"


def parse_variant(text: str) -> Variant:
    """TERM:CAP[:STEPS], TERM:latest or TERM:earliest (--tune)."""
    term, final, steps = [*text.split(":"), str(len(LEARNING_STEPS))][:3]
    rule: FinalDay | int = final if final in ("latest", "earliest") else int(final)  # type: ignore[assignment]
    return float(term), rule, int(steps)


def simulate(
    learners: int, items: int, days: int, seed: int, variants: list[Variant] | None = None
) -> list[Result]:
    """Every strategy; with `variants` (tuning), only exam mode in those variants and the fixed
    intervals."""
    rng = random.Random(seed)
    item_factor = [math.exp(rng.gauss(0, 0.35)) for _ in range(items)]
    exam = START + timedelta(days=days)
    seeds = [rng.randrange(1 << 30) for _ in range(learners)]
    strategies: list[tuple[str, Callable[[Learner], None]]] = []
    if variants is None:
        strategies += [
            (f"fsrs r={r}", lambda learner, r=r: run_fsrs(learner, items, days, r)) for r in (0.85, 0.9, 0.95)
        ]
    # The product's plan, and for comparison the uncapped plans: every final review on the day before
    # the exam (the previous plan, at the term retention tuned for it) or on the earliest day.
    steps = len(LEARNING_STEPS)
    compared: list[Variant] = [
        PRODUCT,
        (EXAM_TERM_RETENTION, EXAM_DAILY_REVIEW_MAX or "latest", len(FSRS_LEARNING_STEPS)),
        (LAST_DAY_TERM, "latest", steps),
        (EXAM_TERM_RETENTION, "earliest", steps),
    ]
    strategies += [
        (exam_name(v), lambda learner, v=v: run_fsrs(learner, items, days, TARGET, *v))
        for v in (variants or compared)
    ]
    strategies += [
        (f"fixed {k} d", lambda learner, k=k: run_fixed(learner, items, days, k)) for k in (2, 4, 7, 14)
    ]
    results = [_run_all(name, run, seeds, item_factor, exam) for name, run in strategies]
    if variants is not None:
        return results
    # The unscheduled baselines spend what fsrs r=0.9 spent (its mean), minus the first exposures.
    budget = Result.mean(next(r for r in results if r.name == "fsrs r=0.9").reviews) - items
    per_day = [round(budget / days)] * days
    cram = [0] * (days - 5) + [round(budget / 5)] * 5
    for name, plan in (("random", per_day), ("cram", cram)):
        run = lambda learner, p=plan: run_random(learner, items, days, p)  # noqa: E731
        results.append(_run_all(name, run, seeds, item_factor, exam))
    return results


def p90(values: list[int]) -> int:
    return sorted(values)[min(len(values) - 1, (len(values) * 9) // 10)]


COLUMNS = [
    "strategy", "retention at exam (mean)", "p10", "learners ≥ 0.9", "reviews per learner (mean)",
    "busiest day (mean)", "busiest day (p90)", "last 3 days (mean)", "mean recall days 15-59",
]  # fmt: skip


def _cells(r: Result) -> list[str]:
    p10 = sorted(r.retention)[len(r.retention) // 10]
    return [
        r.name, f"{Result.mean(r.retention):.3f}", f"{p10:.3f}", f"{r.reached:.0%}",
        f"{Result.mean(r.reviews):.0f}", f"{Result.mean(r.busiest):.0f}", str(p90(r.busiest)),
        f"{Result.mean(r.last3):.0f}", f"{Result.mean(r.term):.3f}",
    ]  # fmt: skip


def table(results: list[Result]) -> str:
    return "\n".join(table_lines(COLUMNS, [_cells(r) for r in results]))


def plot(results: list[Result], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in results:
        x, y = Result.mean(r.reviews), Result.mean(r.retention)
        ax.scatter(x, y, s=40, marker="o" if r.name.startswith("fsrs") else "s")
        ax.annotate(r.name, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.axhline(TARGET, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("reviews per learner over 60 days (mean)")
    ax.set_ylabel("retention at the exam (mean recall probability)")
    ax.set_title("Simulated class: 200 learners, 300 items, exam on day 60")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--out", type=Path, default=REPORTS / "study_sim")
    parser.add_argument(
        "--tune",
        type=parse_variant,
        nargs="+",
        metavar="TERM:CAP",
        help="only exam mode in these variants (TERM:CAP, TERM:latest, TERM:earliest) and the fixed"
        " intervals; prints, writes nothing",
    )
    args = parser.parse_args()
    started = timing.mark()
    results = simulate(args.learners, args.items, args.days, args.seed, args.tune)
    elapsed = timing.elapsed_s(started)
    text = table(results)
    print(text)
    print(f"\n{args.learners} learners, {args.items} items, {args.days} days, seed {args.seed}:", end=" ")
    print(f"{elapsed:.0f} s")
    if args.tune:
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    plot(results, args.out.with_suffix(".png"))
    header = (
        "# Study scheduling: a simulated class\n\n"
        f"`python benchmarks/models/study_sim.py` — {args.learners} learners, {args.items} items, "
        f"{args.days} days, exam on day {args.days}, {NEW_PER_DAY} new items a day, seed {args.seed}"
        f" ({elapsed:.0f} s on one core)."
        " Model and strategies: the script's docstring. Retention at the exam is the mean true recall"
        " probability over all items; reviews count every review, first exposures and same-day learning"
        " steps included.\n\n"
    )
    write_report(args.out, header + text + "\n\n![retention vs reviews](study_sim.png)")


if __name__ == "__main__":
    main()
