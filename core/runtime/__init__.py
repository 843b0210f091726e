"""The process's shared resources (Runtime) and the decisions made once about them (ChatModelPlan)."""

from core.runtime.chat_plan import ChatModelPlan
from core.runtime.runtime import Runtime, open_runtime

__all__ = ["ChatModelPlan", "Runtime", "open_runtime"]
