"""Reciprocal rank fusion on plain lists."""

import pytest

from core.retrieval.fusion import reciprocal_rank_fusion


def test_scores_are_sums_of_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion([1, 2, 3], [3, 4], k=60)
    scores = {c.chunk_id: c.fused_score for c in fused}
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert scores[1] == pytest.approx(1 / 61)
    assert scores[4] == pytest.approx(1 / 62)
    assert [c.chunk_id for c in fused] == [3, 1, 2, 4]


def test_ranks_are_recorded_per_list() -> None:
    fused = {c.chunk_id: c for c in reciprocal_rank_fusion([7, 8], [8, 9], k=60)}
    assert (fused[7].dense_rank, fused[7].lexical_rank) == (1, None)
    assert (fused[8].dense_rank, fused[8].lexical_rank) == (2, 1)
    assert (fused[9].dense_rank, fused[9].lexical_rank) == (None, 2)


def test_agreement_beats_a_single_first_place() -> None:
    # Second in both lists outranks first in only one: the point of fusing.
    fused = reciprocal_rank_fusion([1, 2], [3, 2], k=60)
    assert fused[0].chunk_id == 2


def test_ties_are_broken_deterministically() -> None:
    first = [c.chunk_id for c in reciprocal_rank_fusion([5, 6], [6, 5], k=60)]
    again = [c.chunk_id for c in reciprocal_rank_fusion([5, 6], [6, 5], k=60)]
    assert first == again == [5, 6]


def test_empty_lists() -> None:
    assert reciprocal_rank_fusion([], [], k=60) == []
