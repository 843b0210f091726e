"""Budgets that stop guessers, not classmates (backend/middleware/rate_limits.py keeps them in Redis).

- A password: wrong ones are counted per account *and* address, checked before the password is, so a
  guesser at one address is stopped while the account's owner signs in from another.
- Failed credentials per address (RATE_LIMIT_AUTH_FAILURES): counted when one fails, and only a failing
  one is answered 429; a valid key, session or password from the same address always works.
- Invitation codes: a wrong one spends the signed-in user's budget, or the address's when no one is
  signed in; a right code is never refused (a 50-bit code is not found by the guesses a budget allows).

Each guard wraps the service call: the failure it raises spends the budget on its way out, and becomes
429 + Retry-After once the budget is spent."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated
from uuid import UUID

from fastapi import Depends, Request
from starlette.types import Scope

from backend.accounts.errors import (
    EmailTaken,
    InvitationUsedUp,
    NoSuchInvitation,
    WrongCredentials,
    WrongPassword,
)
from backend.deps import LimiterDep
from backend.middleware.rate_limits import RateLimited, RateLimiter, Verdict, note
from core.messages import Text

TOO_MANY_SIGN_INS = Text("signin.too_many_failures")
TOO_MANY_PASSWORDS = Text("password.too_many_wrong")
TOO_MANY_CODES = Text("join.too_many_codes")


@dataclass(frozen=True)
class Budgets:
    limiter: RateLimiter | None  # None: RATE_LIMIT_ENABLED=false
    scope: Scope

    def _refuse(self, verdict: Verdict | None, detail: str) -> None:
        if verdict is not None and not verdict.allowed:
            note(self.scope, verdict)
            raise RateLimited(verdict, detail)

    @asynccontextmanager
    async def password(self, email: str, *, detail: str = TOO_MANY_SIGN_INS) -> AsyncIterator[None]:
        """Around a password check for `email`: refused at once while this account's budget at this
        address is spent; a wrong password spends it and the address's failure budget."""
        if self.limiter is None:
            yield
            return
        self._refuse(await self.limiter.login_blocked(email, self.scope), detail)
        try:
            yield
        except (WrongCredentials, WrongPassword):
            await self.limiter.login_failed(email, self.scope)
            self._refuse(await self.limiter.auth_failed(self.scope), detail)
            raise

    @asynccontextmanager
    async def code(self, user_id: UUID | None = None) -> AsyncIterator[None]:
        """Around a use of an invitation code: a wrong one (unknown, expired, used up, or a sign-up with a
        taken email, which is a probe too) spends the budget, and is 429 once it is spent."""
        try:
            yield
        except (NoSuchInvitation, InvitationUsedUp, EmailTaken):
            if self.limiter is not None:
                self._refuse(await self.limiter.join_failed(self.scope, user_id), TOO_MANY_CODES)
            raise

    async def credential_failed(self, detail: str) -> None:
        """A wrong key: spends the address's failure budget; RateLimited once it is spent."""
        if self.limiter is not None:
            self._refuse(await self.limiter.auth_failed(self.scope), detail)


def budgets_of(request: Request, limiter: LimiterDep) -> Budgets:
    return Budgets(limiter, request.scope)


BudgetsDep = Annotated[Budgets, Depends(budgets_of)]
