"""A chat model whose replies stop at a given length, for the agents' calls that need their own budget."""

from langchain_core.language_models import BaseChatModel

from core.llm.chat import output_cap


def capped(llm: BaseChatModel, max_tokens: int) -> BaseChatModel:
    """A copy whose replies stop at `max_tokens`, in the form its server reads (llama.cpp ignores
    ChatOpenAI's max_completion_tokens; see core.llm.chat.make_chat_model). A copy, not bind(): a binding
    would not survive with_structured_output in function-calling mode."""
    fields = type(llm).model_fields
    update = {k: v for k, v in output_cap(llm, max_tokens).items() if k in fields}
    return llm.model_copy(update=update) if update else llm
