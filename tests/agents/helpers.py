"""The Rust course both question agents are tested on, indexed by the real worker, and a scripted chat
model that stands in for the LLM."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import httpx
import psycopg
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from agents.common.context import AgentContext
from core.retrieval import Retriever
from tests.chat_fakes import is_self_check, yes_no_reply
from tests.conftest import UserFactory, create_project, index_documents

# Six sections per document, each longer than the chunker's minimum: six chunks of their own.
OWNERSHIP = """# Ownership

## Moves

When a String is assigned to another variable the value is moved, and the first variable can no longer
be used. Rust frees heap memory without a garbage collector: exactly one owner drops the value when it
goes out of scope, so nothing is freed twice.

## Borrowing

A reference borrows a value without taking ownership. Mutable references are exclusive: only one may
exist at a time, and no shared reference may exist alongside it. The borrow checker enforces these
rules when the program is compiled.

## Clone

Calling clone on a String copies the heap data as well as the pointer, length and capacity, so both
variables stay valid afterwards. Cloning can be expensive, which is why Rust never does it implicitly
when a value is assigned.

## Copy types

Integers, booleans, floating point numbers and characters implement the Copy trait. Their values live
entirely on the stack, so assigning one to another variable copies the bits and the original stays usable.

## Dangling references

The compiler guarantees that references never dangle: a function cannot return a reference to a String
it created, because the String is dropped when the function ends. Returning the String itself moves it.

## Slices

A string slice is a reference to a part of a String, written with a range such as &s[0..5]. Slices keep
the borrow rules: while a slice exists, the String it points into cannot be cleared or changed.
"""

STRUCTS = """# Structs

## Defining

A struct groups named fields, like a User with an email and a sign-in count. Each field has a name and a
type, and an instance gives every field a concrete value in any order it likes.

## Field init shorthand

When a function parameter has the same name as a field, the field init shorthand lets you write the name
once, as in User { email, username }, instead of repeating email: email for every such field.

## Update syntax

Struct update syntax creates an instance from another one: ..user1 fills every field not set explicitly.
Because it moves fields like String, user1 may be unusable afterwards as a whole.

## Tuple structs

Tuple structs such as struct Color(i32, i32, i32) have a name but unnamed fields. Color and Point are
different types even when their fields have the same types, so one cannot be passed for the other.

## Methods

Methods are defined in an impl block and take self as their first parameter. They are called with dot
syntax on an instance; &self borrows the instance immutably and &mut self borrows it mutably.

## Associated functions

Functions in an impl block without self are associated functions, often used as constructors such as
Rectangle::square(3). They are called with the struct name and the :: syntax, not with a dot.
"""


@dataclass
class Project:
    id: UUID
    user_id: UUID
    documents: dict[str, UUID]
    chunks: dict[int, dict[str, Any]]  # chunk id -> row


async def course_project(
    client: httpx.AsyncClient, make_user: UserFactory, db: psycopg.AsyncConnection[dict[str, Any]], name: str
) -> Project:
    """The ownership and structs documents indexed in a new project of a new user."""
    headers = await make_user(name)
    project_id = await create_project(client, headers, name=name, language="en")
    ids = await index_documents(
        client, headers, project_id, {"ownership.md": OWNERSHIP, "structs.md": STRUCTS}
    )
    rows = await (
        await db.execute(
            "SELECT id, document_id, section_path, text FROM chunks WHERE project_id = %s", (project_id,)
        )
    ).fetchall()
    documents = {name: UUID(document_id) for name, document_id in ids.items()}
    return Project(UUID(project_id), headers.id, documents, {row["id"]: row for row in rows})


Step = str | Callable[[str], str]


class ScriptedChat(BaseChatModel):
    """Replies in script order; a callable step computes its reply from the prompt (to echo the chunk
    ids it was shown), an AIMessage step is returned as it is. A call beyond the script fails the test."""

    script: list[Any]
    prompts: list[str] = Field(default_factory=list)
    self_check_yes: float = 0.9
    self_checks: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if is_self_check(messages):  # the one-token confidence checks are answered aside, unscripted
            self.self_checks += 1
            return yes_no_reply(self.self_check_yes)
        prompt = "\n".join(str(message.content) for message in messages)
        if len(self.prompts) >= len(self.script):
            raise AssertionError(f"unscripted model call #{len(self.prompts) + 1}:\n{prompt[-600:]}")
        step = self.script[len(self.prompts)]
        self.prompts.append(prompt)
        if isinstance(step, AIMessage):  # a reply with metadata (token log-probabilities)
            return ChatResult(generations=[ChatGeneration(message=step)])
        content = step(prompt) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=content))])


def context(project: Project, retriever: Retriever, llm: BaseChatModel, language: str = "en") -> AgentContext:
    return AgentContext(
        project_id=project.id,
        retriever=retriever,
        llm=llm,
        structured_mode="llama-grammar",
        language=language,
        user_id=project.user_id,
    )
