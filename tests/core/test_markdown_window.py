"""A passage's window of its chunk's Markdown (core/text/markdown_window.py): the chunk's own line breaks
kept, cut between lines or words, a code block the cut opens or leaves open fenced again, never half a
displayed formula; and the highlighted sentence as the passage's text has it."""

from agents.qa.evidence import around, best_sentence
from core.text.markdown_window import find_span, window

PAGE = """## 15.5 - Objetos são mutáveis

Você pode alterar o estado de um objeto fazendo uma atribuição a um dos seus atributos. Por exemplo,
para mudar o tamanho de um retângulo sem mudar sua posição, você pode alterar os valores de width e
height:

```python
box.width = box.width + 50
box.height = box.height + 100
```

Você também pode escrever funções que alteram objetos. Por exemplo, grow_rectangle recebe um objeto
Rectangle e dois números, dwidth e dheight, e adiciona os números à largura e altura do retângulo:

```python
def grow_rectangle(rect, dwidth, dheight):
    rect.width += dwidth
    rect.height += dheight
```

A área de um círculo de raio $r$ é

$$
A = \\pi r^2
$$

e custa $5 ou $10."""


def test_a_short_text_is_whole_with_its_lines() -> None:
    text = "## Rules\n\n```rust\nlet x = 5;\nlet y = x;\n```"
    assert window(text, 0, 600) == text


def test_every_window_keeps_lines_and_balances_fences_and_formulas() -> None:
    for at in range(0, len(PAGE), 7):
        piece = window(PAGE, at, 300)
        assert len(piece) <= 300 + 80, at  # a fence line put back, an ellipsis: never much more
        assert piece.count("```") % 2 == 0, (at, piece)
        assert piece.count("$$") % 2 == 0, (at, piece)
        assert "\n" in piece, at  # the chunk's own line breaks are kept
        # Each line is one of the page's lines (or its end, or its start), a fence or an ellipsis.
        for line in piece.replace("…", "").splitlines():
            assert line == "" or line in PAGE or line.startswith("```"), (at, line)


def test_a_cut_inside_code_reopens_its_fence_and_closes_it() -> None:
    piece = window(PAGE, PAGE.index("box.height"), 120)
    assert piece.startswith("…\n\n```python\nbox.height = box.height + 100\n```\n\nVocê também"), piece
    piece = window(PAGE, PAGE.index("def grow_rectangle"), 60)
    assert piece == "…\n\n```python\ndef grow_rectangle(rect, dwidth, dheight):\n```\n\n…"


def test_a_cut_mid_paragraph_is_marked_without_breaking_a_block() -> None:
    piece = window(PAGE, PAGE.index("Por exemplo,\npara"), 200)
    assert piece.startswith("…exemplo,\npara mudar"), piece  # the wrapped line stays a line
    assert piece.endswith("100\n```\n\n…"), piece  # "…" glued to the fence would reopen the code
    near_end = window(PAGE, len(PAGE), 120)
    assert near_end.endswith("$$\nA = \\pi r^2\n$$\n\ne custa $5 ou $10."), near_end


def test_the_highlight_is_the_sentence_as_the_text_has_it() -> None:
    sentence, _ = best_sentence(PAGE, "Como mudar o tamanho de um retângulo sem mudar sua posição?")
    text, highlight = around(PAGE, sentence, 300)
    assert highlight.startswith("Por exemplo,\npara mudar")  # its wrapped line kept, so a client finds it
    assert highlight in PAGE and highlight[:40] in text
    assert " ".join(highlight.split()) == sentence
    # The heading the flattened sentence ran on from is not part of it.
    sentence, _ = best_sentence(PAGE, "Como alterar o estado de um objeto?")
    assert sentence.startswith("## 15.5 - Objetos são mutáveis Você pode")
    text, highlight = around(PAGE, sentence, 300)
    assert highlight.startswith("Você pode alterar") and highlight in text and text.startswith("## 15.5")
    assert find_span(PAGE, "not in the page") is None
    assert around(PAGE, "not in the page", 300) == (window(PAGE, 0, 300), "not in the page")
