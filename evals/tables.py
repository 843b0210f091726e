"""Markdown tables, as the eval and benchmark reports write them."""

from collections.abc import Iterable, Sequence


def table_lines(head: Sequence[str], rows: Iterable[Sequence[str]], *, figures: bool = False) -> list[str]:
    """The table's lines: `head`, its rule and a line per row of cells. With `figures`, every column but
    the first is aligned right."""
    rule = "".join("---:|" if figures and i else "---|" for i in range(len(head)))
    return ["| " + " | ".join(head) + " |", "|" + rule, *("| " + " | ".join(row) + " |" for row in rows)]
