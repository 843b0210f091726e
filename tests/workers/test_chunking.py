"""Chunking: sizes, code fences, lists, overlap, merging, stability under edits, real documents."""

import itertools
import re
import time
from pathlib import Path

import pytest

from workers.chunking.sections import ChunkDraft, ChunkingConfig, chunk_document
from workers.parsing import ParsedDocument, Section, parse_document
from workers.parsing.markdown import parse_markdown, parse_text

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
RUST = DATA / "rust-book" / "src"
BAD = DATA / "bad-inputs"
DEFAULT = ChunkingConfig()
LIMIT = DEFAULT.max_chars + DEFAULT.overlap_chars

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="shared test data not present")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def fence_lines(text: str) -> int:
    # ch08-01 comments out a code block as "<!-- ```aquascope ... ``` -->": not a fence in Markdown.
    return sum(1 for line in _COMMENT.sub("", text).splitlines() if line.lstrip().startswith("```"))


def markdown(source: str, name: str = "doc.md") -> ParsedDocument:
    return parse_markdown(source.encode(), filename=name)


def assert_chunks_point_into_text(doc: ParsedDocument, chunks: list[ChunkDraft]) -> None:
    for chunk in chunks:
        original = doc.text[chunk.char_start : chunk.char_end]
        if chunk.text != original:  # a re-fenced code piece: synthetic fence lines around the slice
            assert original in chunk.text and fence_lines(chunk.text) > fence_lines(original)


@pytest.fixture(scope="module")
def rust_book() -> dict[str, tuple[ParsedDocument, list[ChunkDraft]]]:
    result = {}
    for path in sorted(RUST.glob("*.md")):
        doc = parse_markdown(path.read_bytes(), filename=path.name)
        result[path.name] = (doc, chunk_document(doc))
    return result


def test_whole_rust_book_chunks_are_bounded_and_keep_code_fenced(rust_book: dict) -> None:
    assert len(rust_book) > 100
    for name, (doc, chunks) in rust_book.items():
        headings = {title for section in doc.sections for title in section.path}
        assert [chunk.ordinal for chunk in chunks] == list(range(len(chunks)))
        for chunk in chunks:
            assert len(chunk.text) <= LIMIT, (name, chunk.ordinal)
            assert fence_lines(chunk.text) % 2 == 0, (name, chunk.ordinal, chunk.text)
            assert set(chunk.section_path) <= headings
            assert chunk.page_start is None and chunk.page_end is None
            assert chunk.embed_text == f"{chunk.context_header}\n\n{chunk.text}"
        assert_chunks_point_into_text(doc, chunks)


def test_whole_rust_book_chunks_quickly() -> None:
    sources = [path.read_bytes() for path in sorted(RUST.glob("*.md"))]
    started = time.perf_counter()
    total = sum(len(chunk_document(parse_markdown(data, filename="x.md"))) for data in sources)
    assert time.perf_counter() - started < 10.0
    assert total > len(sources)


def test_sections_that_fit_stay_whole() -> None:
    source = (RUST / "ch03-02-data-types.md").read_text(encoding="utf-8")
    doc = markdown(source, "ch03-02-data-types.md")
    chunks = chunk_document(doc)
    texts = {chunk.text for chunk in chunks}
    for section in doc.sections:
        if DEFAULT.min_chars <= len(section.text) <= DEFAULT.max_chars:
            assert section.text in texts, section.path
    header = chunks[0].context_header
    assert header == "ch03-02-data-types > Data Types"  # no `#` heading: the filename stem is the title


def test_long_code_block_is_split_between_lines_and_refenced() -> None:
    code = "\n".join(f"    let value_{n} = compute({n}); // line {n}" for n in range(60))
    source = f"# Code\n\nSome intro.\n\n```rust,ignore\n{code}\n```\n\nAfter the code.\n"
    chunks = chunk_document(markdown(source), ChunkingConfig(max_chars=500, overlap_chars=80))
    assert len(chunks) > 3
    body_lines: list[str] = []
    for chunk in chunks:
        assert len(chunk.text) <= 500 + 80
        assert fence_lines(chunk.text) % 2 == 0, chunk.text
        inside = False
        for line in chunk.text.splitlines():
            if line.startswith("```"):
                inside = not inside
                assert line in ("```rust,ignore", "```")
            elif inside:
                body_lines.append(line)
    assert body_lines == code.splitlines()  # every line once, in order, nothing cut mid-line
    # no overlap is taken from code: each chunk after a code piece starts with a fence or new text
    for chunk in chunks[1:]:
        assert chunk.text.startswith("```rust,ignore") or chunk.text.startswith("After the code.")


CODE = "\n".join(f"    x_{n} = call({n})  # comment {n}" for n in range(40))
FENCE_CASES = {
    "unclosed": f"# T\n\n```py\n{CODE}\n",
    "in a list item": "# T\n\n- item\n\n  ```py\n"
    + "\n".join(f"  {line}" for line in CODE.splitlines())
    + "\n  ```\n- next item\n",
    "in a quote": "# T\n\n> ```py\n" + "\n".join(f"> {line}" for line in CODE.splitlines()) + "\n> ```\n",
    "one huge line": "# T\n\n```\n" + "y" * 1000 + "\nshort\n```\n",
}


@pytest.mark.parametrize("name", sorted(FENCE_CASES))
def test_split_code_blocks_stay_balanced(name: str) -> None:
    config = ChunkingConfig(max_chars=300, overlap_chars=50)
    chunks = chunk_document(markdown(FENCE_CASES[name]), config)
    assert len(chunks) > 2
    for chunk in chunks:
        fences = [line for line in chunk.text.splitlines() if line.lstrip(" >").startswith("```")]
        assert len(fences) == 2, chunk.text  # every piece is one complete block, none empty
        assert len(chunk.text) <= config.max_chars + config.overlap_chars
    if name == "one huge line":
        assert "".join(chunk.text for chunk in chunks).count("y") == 1000


def test_list_is_split_between_items_never_inside_one() -> None:
    items = [f"- item {n}: " + "word " * 15 + f"END{n}" for n in range(30)]
    source = "# Lists\n\n" + "\n".join(items) + "\n"
    doc = markdown(source)
    chunks = chunk_document(doc, ChunkingConfig(max_chars=400, overlap_chars=0))
    assert len(chunks) > 5
    seen: list[str] = []
    for chunk in chunks:
        assert len(chunk.text) <= 400
        for line in chunk.text.splitlines():
            if line.startswith("#") or not line:
                continue
            assert re.fullmatch(r"- item \d+: (word ){15}END\d+", line), line  # whole items only
            seen.append(line)
    assert seen == items


def test_overlap_never_carries_half_a_fence() -> None:
    code = "\n\n  ```\n  code {} and more code here\n  ```"
    items = [f"- item {n} " + "word " * 30 + code.format(n) for n in range(8)]
    doc = markdown("# T\n\n" + "\n".join(items) + "\n")
    for overlap in (10, 20, 40, 80, 150):
        for chunk in chunk_document(doc, ChunkingConfig(max_chars=400, overlap_chars=overlap)):
            assert fence_lines(chunk.text) % 2 == 0, (overlap, chunk.text)


def test_long_paragraph_splits_at_sentences_with_overlap() -> None:
    sentences = [f"Sentence number {n} talks about topic {n} in some detail." for n in range(80)]
    doc = parse_text(" ".join(sentences).encode(), filename="notes.txt")
    config = ChunkingConfig(max_chars=600, overlap_chars=150)
    chunks = chunk_document(doc, config)
    assert len(chunks) > 3
    for previous, chunk in itertools.pairwise(chunks):
        assert chunk.text.endswith(".") and chunk.text[0].isupper()  # whole sentences
        assert 0 < previous.char_end - chunk.char_start <= config.overlap_chars  # overlap repeats a tail
        assert previous.text.endswith(doc.text[chunk.char_start : previous.char_end])
        assert len(chunk.text) <= config.max_chars + config.overlap_chars
    covered = "".join(doc.text[c.char_start : c.char_end] for c in chunks)
    assert all(sentence in covered for sentence in sentences)


def test_small_sections_merge_but_big_ones_stay_apart() -> None:
    source = "# Guide\n\nIntro.\n\n## Setup\n\nInstall it.\n\n## Usage\n\nRun it.\n\n# Other\n\n"
    source += "Long text. " * 60
    chunks = chunk_document(markdown(source))
    assert chunks[0].text.startswith("# Guide") and "Run it." in chunks[0].text
    assert chunks[0].section_path == ("Guide",)  # common prefix of the merged paths
    assert chunks[0].context_header == "Guide > Guide"
    assert all(chunk.section_path == ("Other",) for chunk in chunks[1:])
    # nothing in common: the first section's path
    doc = markdown("# A\n\nshort\n\n# B\n\nalso short\n")
    assert [(chunk.section_path, chunk.text) for chunk in chunk_document(doc)] == [
        (("A",), "# A\n\nshort\n\n# B\n\nalso short")
    ]


def test_many_headers_are_merged_into_far_fewer_chunks() -> None:
    doc = parse_document((BAD / "many-headers.md").read_bytes(), source_type="markdown", filename="m.md")
    started = time.perf_counter()
    chunks = chunk_document(doc)
    assert time.perf_counter() - started < 5.0
    assert len(chunks) < len(doc.sections) / 5
    assert all(len(chunk.text) <= DEFAULT.max_chars for chunk in chunks)
    assert chunks[0].section_path == ("Heading 0",)


def test_huge_line_is_cut_within_the_limit() -> None:
    doc = parse_document((BAD / "huge-line.md").read_bytes(), source_type="markdown", filename="huge-line.md")
    started = time.perf_counter()
    chunks = chunk_document(doc)
    assert time.perf_counter() - started < 5.0
    assert all(len(chunk.text) <= LIMIT for chunk in chunks)
    assert all(not chunk.text.startswith("alavra") for chunk in chunks)  # cut at whitespace, not mid-word
    assert chunks[-1].char_end == len(doc.text.rstrip())  # nothing lost at the end
    for previous, chunk in itertools.pairwise(chunks):
        assert chunk.char_start <= previous.char_end  # contiguous coverage


def test_a_word_longer_than_the_limit_is_cut_hard() -> None:
    doc = parse_text(("x" * 5000).encode(), filename="x.txt")
    chunks = chunk_document(doc, ChunkingConfig(max_chars=1000, overlap_chars=100))
    assert [len(chunk.text) for chunk in chunks] == [1000] * 5
    assert "".join(chunk.text for chunk in chunks) == "x" * 5000


def test_deep_nesting_chunks_without_recursion_error() -> None:
    doc = parse_document((BAD / "deep-nesting.md").read_bytes(), source_type="markdown", filename="d.md")
    chunks = chunk_document(doc)
    assert chunks and all(len(chunk.text) <= LIMIT for chunk in chunks)
    assert chunks[-1].text.endswith("quote")


def test_editing_one_section_changes_only_its_chunks() -> None:
    source = (RUST / "ch04-01-what-is-ownership.md").read_text(encoding="utf-8")
    before = markdown(source)
    target = next(s for s in before.sections if s.path[-1] == "Rust Does Not Permit Manual Memory Management")
    cut = source.index(". ", target.char_start + len(target.text) // 2) + 1
    edited = source[:cut] + " This sentence was added by an edit." + source[cut:]
    old, new = chunk_document(before), chunk_document(markdown(edited))
    old_hashes, new_hashes = {c.content_hash for c in old}, {c.content_hash for c in new}
    changed = [chunk for chunk in new if chunk.content_hash not in old_hashes]
    assert changed and all(chunk.section_path == target.path for chunk in changed)
    assert len(old_hashes - new_hashes) <= len([c for c in old if c.section_path == target.path])
    assert len(new_hashes & old_hashes) >= len(old) - 3


def test_chunking_is_deterministic() -> None:
    data = (RUST / "ch08-01-vectors.md").read_bytes()
    first = chunk_document(parse_markdown(data, filename="v.md"))
    second = chunk_document(parse_markdown(data, filename="v.md"))
    assert first == second
    assert [c.content_hash for c in first] == [c.content_hash for c in second]


def test_pdf_chunks_carry_pages_and_paths() -> None:
    path = DATA / "thinkpython2" / "thinkpython2.pdf"
    doc = parse_document(path.read_bytes(), source_type="pdf", filename=path.name)
    chunks = chunk_document(doc)
    assert len(chunks) > 200
    starts = [chunk.page_start for chunk in chunks]
    assert starts == sorted(starts)
    assert all(1 <= c.page_start <= c.page_end <= 288 for c in chunks)
    assert max(c.page_end for c in chunks) >= 280
    assert all(len(chunk.text) <= LIMIT for chunk in chunks)
    assert any(chunk.section_path == ("The way of the program", "What is a program?") for chunk in chunks)
    assert any(c.page_end > c.page_start for c in chunks)  # text flowing over a page break
    offsets = doc.page_offsets
    for chunk in chunks:  # pages are where the chunk's first and last characters are
        assert offsets[chunk.page_start - 1] <= chunk.char_start
        assert chunk.page_start == len(offsets) or chunk.char_start < offsets[chunk.page_start]
        assert offsets[chunk.page_end - 1] < chunk.char_end
        assert chunk.page_end == len(offsets) or chunk.char_end <= offsets[chunk.page_end]
    assert_chunks_point_into_text(doc, chunks)


def test_portuguese_accents_survive_chunking() -> None:
    path = DATA / "pense-python" / "03-funcoes.md"
    chunks = chunk_document(parse_document(path.read_bytes(), source_type="markdown", filename=path.name))
    assert any("função" in chunk.text for chunk in chunks)
    assert chunks[0].context_header.startswith("Capítulo 3: Funções")


def test_nul_is_stripped_and_empty_header_omitted() -> None:
    text = "Some\x00 text"
    doc = ParsedDocument(title="", text=text, sections=[Section((), text, 0, len(text))])
    (chunk,) = chunk_document(doc)
    assert chunk.text == "Some text" and chunk.context_header == ""
    assert chunk.embed_text == "Some text"
    assert (chunk.page_start, chunk.page_end, chunk.char_start, chunk.char_end) == (None, None, 0, len(text))


def test_only_whitespace_document_gives_no_chunks() -> None:
    doc = ParsedDocument(title="t", text="  \n\t\n", sections=[Section((), "  \n\t\n", 0, 5)])
    assert chunk_document(doc) == []
