"""Finding a cited passage among a page's words (backend/documents/page_highlight.passage_boxes): one box
per line of the run that holds it, through OCR's misreadings, never stretched by a phrase that recurs
elsewhere on the page, and nothing for a passage that is not on the page."""

from backend.documents.page_highlight import Box, passage_boxes, tokens
from core.text.page_words import PageWord

LINES = [
    "1.7. Debugging",
    "Programmers make mistakes. For whimsical reasons, programming errors are called bugs and the",
    "process of tracking them down is called debugging.",
    "Programming, and especially debugging, sometimes brings out strong emotions.",
    "In the process of debugging you may feel angry, despondent, or embarrassed.",
]
PASSAGE = (
    "For whimsical reasons, programming errors are called bugs and the process of tracking them down is "
    "called debugging."
)


def page(lines: list[str]) -> list[PageWord]:
    """Words left to right, 20 units apart, a line every 50 (whole numbers: boxes compare exactly)."""
    words = []
    for number, line in enumerate(lines):
        for position, text in enumerate(line.split()):
            x, y = 100 + 20 * position, 100 + 50 * number
            words.append(PageWord(x0=x, y0=y, x1=x + 15, y1=y + 30, text=text, line=number))
    return words


def test_the_passage_is_boxed_line_by_line_from_its_first_word_to_its_last() -> None:
    boxes, matched, total = passage_boxes(page(LINES), PASSAGE)
    assert (matched, total) == (len(tokens(PASSAGE)), len(tokens(PASSAGE)))
    first, last_1, last_2 = (
        LINES[1].split().index("For"),
        len(LINES[1].split()) - 1,
        len(LINES[2].split()) - 1,
    )
    assert boxes == [
        Box(x0=100 + 20 * first, y0=150, x1=100 + 20 * last_1 + 15, y1=180),
        Box(x0=100, y0=200, x1=100 + 20 * last_2 + 15, y1=230),
    ]


def test_a_misread_word_and_a_dropped_one_do_not_lose_the_passage() -> None:
    misread = [*LINES]
    misread[1] = misread[1].replace("whimsical", "whimsica1").replace(" called bugs", " bugs")
    boxes, matched, total = passage_boxes(page(misread), PASSAGE)
    assert len(boxes) == 2 and boxes[1].y0 == 200
    assert total - 3 <= matched < total


def test_a_phrase_that_recurs_elsewhere_on_the_page_does_not_stretch_the_highlight() -> None:
    boxes, _, _ = passage_boxes(page(LINES), "the process of tracking them down is called debugging.")
    # "the process of" is on line 4 too: only lines 1 and 2 are boxed.
    assert [box.y0 for box in boxes] == [150, 200]


def test_a_passage_that_is_not_on_the_page_gets_no_box() -> None:
    other = "A slice is a reference to a contiguous run of elements in a collection, not the whole of it."
    assert passage_boxes(page(LINES), other)[0] == []
    assert passage_boxes(page(LINES), "")[0] == []
    assert passage_boxes([], PASSAGE) == ([], 0, len(tokens(PASSAGE)))


def test_words_compare_without_case_accents_or_punctuation() -> None:
    assert tokens("Função — don't, ÉTÉ!") == ["funcao", "don", "t", "ete"]
