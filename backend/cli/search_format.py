"""Plain-text rendering of a retrieval result for the command line."""

from core.retrieval import Candidate, RetrievalResult


def _where(c: Candidate) -> str:
    pages = ""
    if c.row.get("page_start") is not None:
        pages = f" p.{c.row['page_start']}" + (
            f"-{c.row['page_end']}" if c.row["page_end"] != c.row["page_start"] else ""
        )
    return f"{c.row.get('document_title', '?')} > {' > '.join(c.row.get('section_path') or [])}{pages}"


def _ranks(c: Candidate) -> str:
    dense = c.dense_rank if c.dense_rank is not None else "-"
    lexical = c.lexical_rank if c.lexical_rank is not None else "-"
    rerank = f"{c.rerank_score:.3f}" if c.rerank_score is not None else "-"
    return f"dense #{dense}  bm25 #{lexical}  rrf {c.fused_score:.4f}  rerank {rerank}"


def format_result(result: RetrievalResult, *, debug: bool = False) -> str:
    heading = f"{len(result.results)} results for {result.query!r}"
    lines = [f"{heading} (profile {result.profile}, reranker {result.reranker})"]
    for rank, c in enumerate(result.results, start=1):
        excerpt = " ".join(c.text.split())[:160]
        lines += [f"{rank:>3}. [{c.chunk_id}] {_where(c)}", f"     {_ranks(c)}", f"     {excerpt}"]
    if debug:
        lines.append("dense:   " + " ".join(str(c.chunk_id) for c in result.dense[:20]))
        lines.append("lexical: " + " ".join(str(c.chunk_id) for c in result.lexical[:20]))
        lines.append("fused:   " + " ".join(str(c.chunk_id) for c in result.fused[:20]))
        lines.append("timings (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in vars(result.timings).items()))
    return "\n".join(lines)
