"""Each agent as a run knows it: its history rows' name and what its failures tell the caller."""

from agents.runs.service import AgentSpec

QA = AgentSpec("qa", unusable="The chat model's reply was unusable: {error}")
EVALUATOR = AgentSpec("evaluator", unusable="The model did not produce a grade: {error}")
GENERATOR = AgentSpec("generator", unusable="The chat model's reply was unusable: {error}")
PLANNER = AgentSpec(
    "planner",
    unusable="The chat model's reply could not be read as an outline; try again.",
    unreachable="The chat model could not be reached; try again shortly.",
)
# Worker runs: no history row; the job maps the errors to its own failure reason from their cause.
WRITER = AgentSpec(
    "writer", unusable="{error}", unreachable="The chat model could not be reached; try again later."
)
JUDGE = AgentSpec("judge", unusable="{error}", unreachable="The chat model could not be reached.")
