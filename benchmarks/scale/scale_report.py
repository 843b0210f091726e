"""The scale benchmark's tables: per-bucket percentiles, recall and isolation, the load, the crowded
small projects and the slowest queries."""

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.scale.scale_load import LoadReport
from benchmarks.scale.scale_queries import BUCKETS, TOP_K, CrowdedCase, Outcome, Project
from core.settings.retrieval import RetrievalSettings


def percentiles(values: Sequence[float]) -> tuple[float, float, float]:
    if not values:
        return (float("nan"),) * 3  # type: ignore[return-value]
    p50, p95, p99 = np.percentile(np.asarray(values), [50, 95, 99])
    return float(p50), float(p95), float(p99)


@dataclass
class BucketRow:
    bucket: str
    projects: int
    sampled: int
    queries: int
    path: str
    total: tuple[float, float, float]
    dense: tuple[float, float, float]
    lexical: tuple[float, float, float]
    other: tuple[float, float, float]  # total - dense - lexical: count, hydrate, thread hop, round trips
    recall10: float
    recall100: float
    short_dense: int  # dense lists shorter than min(depth, project size)
    short_results: int  # results shorter than min(top_k, project size)
    foreign: int


def summarise(outcomes: Sequence[Outcome], projects: Sequence[Project], depth: int) -> list[BucketRow]:
    by_bucket: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_bucket[outcome.bucket].append(outcome)
    rows = []
    for name, _, _ in BUCKETS:
        group = by_bucket.get(name, [])
        if not group:
            continue
        paths = Counter(o.path for o in group)  # e.g. "hnsw 93,hnsw+exact 7" when some scans fell short
        rows.append(
            BucketRow(
                bucket=name,
                projects=sum(1 for p in projects if p.bucket == name),
                sampled=len({o.query.project.id for o in group if o.query}),
                queries=len(group),
                path=",".join(f"{path} {count}" for path, count in sorted(paths.items())),
                total=percentiles([o.total_ms for o in group]),
                dense=percentiles([o.dense_ms for o in group]),
                lexical=percentiles([o.lexical_ms for o in group]),
                other=percentiles([o.total_ms - o.dense_ms - o.lexical_ms for o in group]),
                recall10=float(np.mean([o.recall10 for o in group])),
                recall100=float(np.mean([o.recall100 for o in group])),
                short_dense=sum(
                    1 for o in group if o.query and o.dense_len < min(depth, o.query.project.size)
                ),
                short_results=sum(
                    1 for o in group if o.query and o.results < min(TOP_K, o.query.project.size)
                ),
                foreign=sum(o.foreign for o in group),
            )
        )
    return rows


def print_table(rows: Sequence[BucketRow], config: RetrievalSettings) -> None:
    print(
        f"\nexact_below={config.exact_below} ef_search={config.hnsw_ef_search} "
        f"max_scan_tuples={config.hnsw_max_scan_tuples} candidate_depth={config.candidate_depth}"
    )
    header = (
        f"{'bucket':>9} {'proj':>5} {'smpl':>4} {'qry':>4} {'path (queries)':>22} | "
        f"{'total p50/p95/p99 ms':>20} | "
        f"{'dense p50/p95/p99':>18} | {'lexical p50/p95/p99':>19} | {'other p50/p95':>13} | "
        f"{'R@10':>5} {'R@100':>5} {'short':>5} {'foreign':>7} | target"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        ok = r.recall10 >= 0.95 and r.total[1] <= 100 and r.foreign == 0 and r.short_results == 0
        print(
            f"{r.bucket:>9} {r.projects:>5} {r.sampled:>4} {r.queries:>4} {r.path:>22} | "
            f"{_triple(r.total):>20} | {_triple(r.dense):>18} | {_triple(r.lexical):>19} | "
            f"{_triple(r.other[:2]):>13} | "
            f"{r.recall10:>5.3f} {r.recall100:>5.3f} {r.short_dense:>5} {r.foreign:>7} | "
            f"{'ok' if ok else 'MISS'}"
        )


def _triple(values: tuple[float, ...]) -> str:
    return "/".join(f"{v:.1f}" for v in values)


def print_load(report: LoadReport) -> None:
    print(f"\n== load: {report.chunks:,} chunks, {report.projects:,} projects, {report.documents:,} docs ==")
    rate = report.chunks / report.generate_copy_s
    print(f"generate + COPY: {report.generate_copy_s:.1f} s ({rate:,.0f} rows/s)")
    print(f"project_chunk_stats (one INSERT ... SELECT): {report.stats_s:.1f} s")
    for name, seconds in report.index_build_s.items():
        print(f"index build {name}: {seconds:.1f} s")
    print(f"VACUUM (ANALYZE) + CHECKPOINT: {report.vacuum_analyze_s:.1f} s")
    print(f"embedding column storage: {report.vector_storage}")
    print_sizes(report.sizes)


def print_sizes(sizes: dict[str, int]) -> None:
    for name, size in sizes.items():
        print(f"  {name:<40} {size / 2**20:>10,.1f} MiB")


def print_crowded(cases: Sequence[CrowdedCase], exact_below: int) -> None:
    if not cases:
        return
    print(
        "\n== smallest projects queried at a popular shared topic (dense list length; "
        "full = min(depth, size)) =="
    )
    print(f"{'size':>5} {'others in global top-100':>25} {f'exact_below={exact_below}':>18} {'HNSW only':>9}")
    for c in cases:
        size = c.query.project.size
        print(f"{size:>5} {c.others_in_global_top100:>25} {c.with_config:>18} {c.hnsw_only:>9}")
    full = sum(1 for c in cases if c.with_config == min(100, c.query.project.size))
    print(
        f"full dense lists with the config: {full}/{len(cases)}; with HNSW alone: "
        f"{sum(1 for c in cases if c.hnsw_only == min(100, c.query.project.size))}/{len(cases)}; "
        f"foreign ids: {sum(c.foreign for c in cases)}"
    )


def print_slowest(outcomes: Sequence[Outcome], n: int = 3) -> None:
    print("\nslowest queries:")
    for o in sorted(outcomes, key=lambda o: -o.total_ms)[:n]:
        q = o.query
        assert q is not None
        print(
            f"  {o.total_ms:.1f} ms (dense {o.dense_ms:.1f}, lexical {o.lexical_ms:.1f}, "
            f"hydrate {o.hydrate_ms:.1f}, embed hop {o.embed_ms:.1f}) {o.bucket} "
            f"size={q.project.size} path={o.path} kind={q.kind} text={q.text!r}"
        )
