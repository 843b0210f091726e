"""QA eval cases from the development data: the Rust book's quizzes of chapters 1–9 (multiple choice
and short answer; code-tracing questions need a compiler, not a book), a sample of FaQuAD's training
questions (Portuguese, extractive), and questions that the material does not answer.

Each case names the documents its project holds and the evidence a good citation shows: the quiz's
chapter file, or a FaQuAD gold answer span."""

import json
import random
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agents.qa.options import choice_question

Kind = Literal["multiple_choice", "short_answer", "extractive", "absent"]


@dataclass(frozen=True)
class QACase:
    id: str
    dataset: str  # 'rust-quizzes', 'faquad', or the dataset an absent case is asked in
    kind: Kind
    question: str  # exactly what is asked, options included
    answers: tuple[str, ...] = ()  # gold answers (the correct option's text for multiple choice)
    options: tuple[str, ...] = ()  # multiple choice, in the order shown
    evidence_files: frozenset[str] = frozenset()  # a citation of one of these files is on target
    evidence_texts: tuple[str, ...] = ()  # or: a cited chunk containing one of these is on target


@dataclass
class Corpus:
    name: str
    language: str
    files: dict[str, str] = field(default_factory=dict)  # file name -> Markdown text


@dataclass
class QADataset:
    corpus: Corpus
    cases: list[QACase]


def rust_quizzes(
    data_dir: Path, *, chapters: range = range(1, 10), limit: int = 0, seed: int = 7
) -> QADataset:
    """The book's chapter files of `chapters` as the project, their quizzes as cases."""
    book = data_dir / "rust-book"
    corpus = rust_book(data_dir, chapters=chapters)
    rng = random.Random(seed)
    cases: list[QACase] = []
    for quiz in sorted((book / "quizzes").glob("ch*.toml")):
        if _chapter(quiz.name) not in chapters:
            continue
        section = quiz.name[: len("ch00-00")]
        files = frozenset(name for name in corpus.files if name.startswith(section))
        for number, item in enumerate(tomllib.loads(quiz.read_text()).get("questions", [])):
            case = _quiz_case(item, f"{quiz.stem}#{number}", files, rng)
            if case is not None:
                cases.append(case)
    if limit:
        cases = rng.sample(cases, min(limit, len(cases)))
    return QADataset(corpus, cases)


def rust_book(data_dir: Path, *, chapters: range | None = None) -> Corpus:
    """The book's chapter files (of `chapters`, else all of them) as a corpus; no quiz is read."""
    corpus = Corpus("rust-book", "en")
    for path in sorted((data_dir / "rust-book" / "src").glob("ch*.md")):
        if chapters is None or _chapter(path.name) in chapters:
            corpus.files[path.name] = path.read_text()
    return corpus


def _chapter(filename: str) -> int:
    match = re.match(r"ch(\d+)-", filename)
    return int(match.group(1)) if match else -1


def _quiz_case(item: dict, case_id: str, files: frozenset[str], rng: random.Random) -> QACase | None:
    prompt, answer = item.get("prompt", {}), item.get("answer", {})
    question = str(prompt.get("prompt", "")).strip()
    if not question or not files:
        return None
    if item.get("type") == "MultipleChoice":
        correct = answer.get("answer")
        if not isinstance(correct, str):  # several correct options: not a single-answer question
            return None
        options = [correct, *[str(d) for d in prompt.get("distractors", [])]]
        rng.shuffle(options)
        return QACase(
            id=case_id,
            dataset="rust-quizzes",
            kind="multiple_choice",
            question=choice_question(question, options),
            answers=(correct,),
            options=tuple(options),
            evidence_files=files,
        )
    if item.get("type") == "ShortAnswer":
        gold = answer.get("answer")
        if not isinstance(gold, str) or not gold.strip():
            return None
        return QACase(case_id, "rust-quizzes", "short_answer", question, (gold,), evidence_files=files)
    return None


def faquad(data_dir: Path, *, articles: int = 3, limit: int = 20, seed: int = 7) -> QADataset:
    """A few FaQuAD articles as Markdown documents (one per article), their questions as cases."""
    data = json.loads((data_dir / "faquad" / "train.json").read_text())["data"]
    rng = random.Random(seed)
    chosen = rng.sample(data, min(articles, len(data)))
    corpus = Corpus("faquad", "pt")
    cases: list[QACase] = []
    for number, article in enumerate(chosen):
        name = f"faquad-{number:02d}.md"
        paragraphs = [p["context"].strip() for p in article["paragraphs"]]
        corpus.files[name] = f"# {article['title']}\n\n" + "\n\n".join(paragraphs) + "\n"
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                golds = tuple(dict.fromkeys(a["text"].strip() for a in qa["answers"] if a["text"].strip()))
                if golds:
                    cases.append(
                        QACase(qa["id"], "faquad", "extractive", qa["question"].strip(), golds,
                               evidence_files=frozenset(), evidence_texts=golds)
                    )  # fmt: skip
    return QADataset(corpus, rng.sample(cases, min(limit, len(cases))))


# Questions neither project's material answers; hand-written for this eval (development data). The
# first of each list are far from the material; the rest are near misses: topics of the same subject
# that the project's documents do not cover (later Rust-book chapters are not in the chapters 1-9
# project; FaQuAD's project holds three articles on other subjects).
ABSENT = {
    "rust-book": (
        "How do I configure a Kubernetes ingress controller for TLS termination?",
        "What is the boiling point of ethanol at sea level?",
        "Which year did the Apollo 11 mission land on the Moon?",
        "How do I write an SQL window function that computes a running total?",
        "What is the time complexity of Dijkstra's algorithm with a Fibonacci heap?",
        "How do I train a convolutional neural network with PyTorch?",
        "What causes the seasons on Earth?",
        "How do I center a div with CSS flexbox?",
        "How do I spawn a new thread in Rust and wait for it to finish?",
        "How do I share data between threads with Arc and Mutex?",
        "What does the lifetime annotation 'a mean in a function signature?",
        "How do I define a trait with a default method implementation?",
        "What is the difference between Box<T>, Rc<T> and RefCell<T>?",
        "How do I write an async function and await a future in Rust?",
        "How do closures capture values from their environment?",
        "How do I write a declarative macro with macro_rules!?",
        "How do I create an iterator adaptor chain with map and filter?",
        "How do I write an integration test in the tests directory?",
        "How do I publish a crate to crates.io?",
        "What is a trait object and how is dyn Trait dispatched?",
    ),
    "faquad": (
        "Qual é a capital da Austrália?",
        "Quem escreveu o romance Dom Casmurro?",
        "Como se calcula a derivada de uma função exponencial?",
        "Qual é a fórmula química da água?",
        "Em que ano terminou a Segunda Guerra Mundial?",
        "Como funciona a fotossíntese nas plantas?",
        "Quantos jogadores tem um time de futebol em campo?",
        "O que é uma lista encadeada em programação?",
        "Qual é o maior planeta do sistema solar?",
        "Como se declara uma variável em Python?",
    ),
}


# Written after the answer-support threshold (agents/qa/support.py) was read off ABSENT, to check it
# on questions it was not tuned on: topics of the Rust book's later chapters (not its quizzes) and
# general knowledge in Portuguese.
ABSENT_HOLDOUT = {
    "rust-book": (
        "How do I send values between threads using channels?",
        "How do I implement the Iterator trait for my own struct?",
        "What is the Deref trait and how does deref coercion work?",
        "How do I dereference a raw pointer in an unsafe block?",
        "How do I write a generic function with a trait bound?",
        "How do I use cargo workspaces to manage several packages?",
        "How do I mark a test so that cargo test ignores it unless asked?",
        "What is the difference between the Fn, FnMut and FnOnce traits?",
        "How do I build a web server with a pool of worker threads?",
        "How do I use Weak<T> to avoid reference cycles?",
        "How do I read environment variables in a command line program?",
        "How do I overload the + operator for my own type?",
    ),
    "faquad": (
        "Qual é a velocidade da luz no vácuo?",
        "Quem pintou a Mona Lisa?",
        "Como se resolve uma equação do segundo grau?",
        "O que diz o teorema de Pitágoras?",
    ),
}


def absent_cases(corpus: Corpus, *, holdout: bool = False) -> list[QACase]:
    questions, tag = (ABSENT_HOLDOUT, "absent-holdout") if holdout else (ABSENT, "absent")
    return [
        QACase(f"{tag}-{corpus.name}-{i}", corpus.name, "absent", question)
        for i, question in enumerate(questions.get(corpus.name, ()))
    ]
