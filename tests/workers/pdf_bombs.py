"""Hostile PDFs made in the test, small on disk and costly to parse (issue 11, part 1).

- `glyph_bomb_pdf`: one page whose Flate-compressed content stream inflates to tens of MB of text
  operators drawing tens of millions of glyphs on the page: text extraction keeps a record per glyph,
  so it needs gigabytes of memory (a compression bomb).
- `offpage_bomb_pdf`: the same amount of drawing, all of it outside the page, so extraction keeps
  nothing and only spends time: a time bomb that stays small in memory.
- `many_pages_pdf`: a file of many small pages.
"""

import zlib

import pymupdf

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEF"  # 32 glyphs per show operator


def _deflated(blocks: list[bytes], repeat: int) -> bytes:
    compressor = zlib.compressobj(9)
    parts = [compressor.compress(blocks[index % len(blocks)]) for index in range(repeat)]
    parts.append(compressor.flush())
    return b"".join(parts)


def _one_page_with_content(deflated: bytes) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Cover text.", fontname="helv")  # gives the page a /helv font resource
    page.clean_contents()
    (xref,) = page.get_contents()
    # The page's content stream becomes the bomb, stored compressed as given, with its filter.
    doc.update_stream(xref, deflated, compress=False)
    doc.xref_set_key(xref, "Filter", "/FlateDecode")
    data = doc.tobytes()
    doc.close()
    return data


def glyph_bomb_pdf(inflated_mb: int = 24) -> bytes:
    # 700 lines of 32 glyphs down the page, then the next block from the top again, each block a little
    # to the right of the one before (glyphs at a new place, so nothing can be merged away).
    lines = f"({_LETTERS}) '\n" * 700
    blocks = [f"BT /helv 1 Tf 1 TL {10 + shift} 800 Td\n{lines}ET\n".encode() for shift in range(50)]
    repeat = inflated_mb * 1024 * 1024 // len(blocks[0]) + 1
    return _one_page_with_content(_deflated(blocks, repeat))


def offpage_bomb_pdf(inflated_mb: int = 128) -> bytes:
    block = f"BT /helv 1 Tf 10 -500 Td ({_LETTERS}) Tj ET\n".encode() * 512
    return _one_page_with_content(_deflated([block], inflated_mb * 1024 * 1024 // len(block) + 1))


def many_pages_pdf(pages: int, text: str = "Page {n} of a long file.") -> bytes:
    doc = pymupdf.open()
    for number in range(1, pages + 1):
        doc.new_page(width=200, height=200).insert_text((20, 40), text.format(n=number))
    data = doc.tobytes()
    doc.close()
    return data
