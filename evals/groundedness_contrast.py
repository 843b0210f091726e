"""How the judge's contrast check would decide, margin by margin, on every SciFact claim of a split
judged against its own evidence: the claims the model accepts (yes/no call, e5 gate passed) are
scored beside their passage against their model-written opposite, and the table counts, per margin,
the supported claims kept and the contradicted claims caught. The margin in
agents/common/contrast.py was read off the dev split with this script.

    python -m evals.groundedness_contrast [--split dev] [--margins 0,0.05,0.1,0.2]"""

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from agents.common.contrast import ContrastCheck
from agents.groundedness.config import JudgeConfig
from agents.groundedness.judge import ClaimJudge, EmbeddedPassages
from core.embeddings.models import make_embeddings
from core.llm.chat import StructuredMode
from core.settings import Settings
from evals.groundedness_judge import DEFAULT_DATA, Evidence, _chunks, chat_model, in_split, load_evidence


@dataclass(frozen=True)
class Scored:
    label: str  # SUPPORT or CONTRADICT
    accepted: bool  # passed the e5 gate and the model said yes
    difference: float | None  # P(yes | claim) - P(yes | opposite); None when not accepted or abstained


async def score_claim(
    evidence: Evidence,
    chunks: Sequence[tuple[int, str]],
    check: ContrastCheck,
    embedded: EmbeddedPassages,
    mode: StructuredMode,
) -> Scored:
    judge = ClaimJudge(check.llm, chunks, mode, usage=None, config=JudgeConfig(), embedded=embedded)
    passage = await judge.accepted_passage(evidence.claim)
    if passage is None:
        return Scored(evidence.label, False, None)
    return Scored(evidence.label, True, await check.difference(passage.text, evidence.claim))


def table(scored: Sequence[Scored], margins: Sequence[float]) -> str:
    support = [s for s in scored if s.label == "SUPPORT"]
    contradict = [s for s in scored if s.label == "CONTRADICT"]
    lines = [
        f"claims: {len(support)} supported, {len(contradict)} contradicted; accepted by the model:"
        f" {sum(s.accepted for s in support)} supported, {sum(s.accepted for s in contradict)} contradicted",
        "",
        "| margin | supported kept | contradicted caught | accuracy, supported | accuracy, contradicted |",
        "| --- | --- | --- | --- | --- |",
    ]
    for margin in margins:

        def kept(s: Scored, margin: float = margin) -> bool:
            return s.accepted and (s.difference is None or s.difference > -margin)

        accepted_support = [s for s in support if s.accepted]
        accepted_contradict = [s for s in contradict if s.accepted]
        support_kept = sum(kept(s) for s in accepted_support)
        caught = sum(not kept(s) for s in accepted_contradict)
        lines.append(
            f"| {margin} | {support_kept}/{len(accepted_support)} | {caught}/{len(accepted_contradict)}"
            f" | {sum(kept(s) for s in support) / len(support):.3f}"
            f" | {sum(not kept(s) for s in contradict) / len(contradict):.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--margins", default="0,0.05,0.1,0.2")
    args = parser.parse_args(argv)
    margins = [float(m) for m in args.margins.split(",")]
    settings, config = Settings(), JudgeConfig()
    claims = in_split(load_evidence(DEFAULT_DATA), args.split)
    embeddings = make_embeddings(settings)
    with chat_model(settings) as (llm, mode):

        async def run() -> list[Scored]:
            check, scored = ContrastCheck(llm), []
            for number, evidence in enumerate(claims, start=1):
                chunks = [(chunk.id, chunk.text) for chunk in _chunks(evidence.sentences)]
                embedded = await EmbeddedPassages.of(embeddings, chunks, config.passage_chars)
                if embedded is None:  # evidence without a sentence: nothing to judge against
                    continue
                scored.append(await score_claim(evidence, chunks, check, embedded, mode))
                print(f"{number:4d} {scored[-1]}", flush=True)
            return scored

        print(table(asyncio.run(run()), margins))


if __name__ == "__main__":
    main()
