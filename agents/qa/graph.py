"""The RAG QA graph: plan the query (no model call for a standalone question), retrieve, gate on
relevance, then score a question's own options or answer with citations the application builds from
the chunks it actually showed the model.

    START -> plan -> (clarify -> END) | retrieve -> gate -> (END | choose | answer | answer_stream) -> END

The nodes live in agents/qa/nodes.py and agents/qa/choose.py; here they are bound to one QAConfig.
"""

from functools import partial
from typing import Any

from langgraph.graph import END, START, StateGraph

from agents.common.context import AgentContext
from agents.qa import nodes
from agents.qa.choose import choose
from agents.qa.config import DEFAULT_CONFIG, QAConfig
from agents.qa.state import QAInput, QAOutput, QAState

__all__ = ["build_graph", "graph"]


def build_graph(config: QAConfig = DEFAULT_CONFIG) -> Any:
    builder = StateGraph(QAState, context_schema=AgentContext, input_schema=QAInput, output_schema=QAOutput)
    builder.add_node("plan", partial(nodes.plan, qa=config))
    builder.add_node("clarify", nodes.clarify)
    builder.add_node("retrieve", partial(nodes.retrieve, qa=config))
    builder.add_node("gate", partial(nodes.gate, qa=config))
    builder.add_node("choose", partial(choose, qa=config))
    builder.add_node("answer", partial(nodes.answer, qa=config))
    builder.add_node("answer_stream", partial(nodes.answer_stream, qa=config))
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", nodes.after_plan, ["clarify", "retrieve"])
    builder.add_edge("clarify", END)
    builder.add_edge("retrieve", "gate")
    builder.add_conditional_edges("gate", nodes.after_gate, ["choose", "answer", "answer_stream", END])
    for name in ("choose", "answer", "answer_stream"):
        builder.add_edge(name, END)
    return builder.compile(name="rag_qa")


graph = build_graph()
