"""The process's shared resources (Runtime) and the decisions made once about them (ChatModelPlan)."""

from core.runtime.chat_plan import ChatModelPlan
from core.runtime.runtime import Runtime, make_retriever, open_runtime

__all__ = ["ChatModelPlan", "Runtime", "make_retriever", "open_runtime"]
