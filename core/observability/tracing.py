"""LangSmith tracing and feedback, only when an API key is configured.

Built once at start-up from the settings and passed in: nothing reads or sets LANGSMITH_* variables in
the environment, so a process without a key sends nothing anywhere, and tests can point a client at a
local server. Runs are traced by handing `callbacks()` to a graph's config; a groundedness verdict is
attached afterwards to the run it judged as feedback."""

import logging
from collections.abc import Sequence
from typing import Protocol
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers import LangChainTracer
from langsmith import Client
from langsmith.utils import LangSmithNotFoundError

from core.settings import Settings

log = logging.getLogger(__name__)


class _Claim(Protocol):
    claim: str
    supported: bool


class GroundednessResult(Protocol):
    """What feedback needs of agents.groundedness.Judgement (core does not import agents)."""

    groundedness: float
    relevance: float
    hallucination_risk: float
    flagged: bool

    @property
    def claims(self) -> Sequence[_Claim]: ...


class Tracing:
    def __init__(self, client: Client, project_name: str) -> None:
        self.client = client
        self.project_name = project_name
        self._project_id: UUID | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "Tracing | None":
        """None without an API key: the caller then passes no callbacks and records no feedback."""
        if not settings.tracing.langsmith_api_key:
            return None
        client = Client(
            api_url=settings.tracing.langsmith_endpoint, api_key=settings.tracing.langsmith_api_key
        )
        return cls(client, settings.tracing.langsmith_project)

    def callbacks(self) -> list[BaseCallbackHandler]:
        """For a graph's config: `{"run_id": run_id, "callbacks": tracing.callbacks()}`."""
        return [LangChainTracer(client=self.client, project_name=self.project_name)]

    def _project(self) -> UUID | None:
        """The project's id, looked up once: LangSmith locates a run's feedback by project (feedback
        without one is deprecated). The project is created if no run has reached it yet; if the lookup
        fails the feedback is still sent, without it."""
        if self._project_id is None:
            try:
                try:
                    project = self.client.read_project(project_name=self.project_name)
                except LangSmithNotFoundError:
                    project = self.client.create_project(self.project_name, upsert=True)
                self._project_id = project.id
            except Exception as error:  # tracing must never break the job that records feedback
                log.warning("langsmith project %s not resolved: %s", self.project_name, error)
        return self._project_id

    def record_feedback(self, run_id: UUID, judgement: GroundednessResult) -> None:
        """Attaches the verdict to `run_id`, the root run of the judged answer (the id passed in the
        graph's config), as three scores: groundedness (with the claims), hallucination_risk and
        relevance. Blocking network calls: from async code, run it in a thread."""
        unsupported = [c.claim for c in judgement.claims if not c.supported]
        comment = f"{len(judgement.claims) - len(unsupported)}/{len(judgement.claims)} claims supported"
        if unsupported:
            comment += "; unsupported: " + " | ".join(unsupported)
        scores = {
            "groundedness": judgement.groundedness,
            "hallucination_risk": judgement.hallucination_risk,
            "relevance": judgement.relevance,
        }
        project_id = self._project()
        for key, score in scores.items():
            self.client.create_feedback(
                run_id,
                key,
                trace_id=run_id,  # the judged run is a root run: feedback is then batched in the background
                session_id=project_id,
                score=score,
                comment=comment if key == "groundedness" else None,
                value={"flagged": judgement.flagged} if key == "hallucination_risk" else None,
                extra={"claims": [{"claim": c.claim, "supported": c.supported} for c in judgement.claims]}
                if key == "groundedness"
                else None,
                feedback_source_type="model",
                source_info={"judge": "groundedness"},
            )

    def record_score(self, run_id: UUID, key: str, score: float, comment: str | None = None) -> None:
        """One evaluator's score of a run (the evals runner's correctness, citation precision...)."""
        self.client.create_feedback(
            run_id, key, trace_id=run_id, session_id=self._project(), score=score, comment=comment,
            feedback_source_type="model", source_info={"evaluator": key},
        )  # fmt: skip

    def flush(self) -> None:
        self.client.flush()
