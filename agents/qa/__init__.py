"""RAG QA: answers a question from one project's material, with citations the application builds."""

from agents.qa.config import DEFAULT_CONFIG, QAConfig, qa_config
from agents.qa.graph import build_graph, graph
from agents.qa.state import QAInput, QAOutput

__all__ = ["DEFAULT_CONFIG", "QAConfig", "QAInput", "QAOutput", "build_graph", "graph", "qa_config"]
