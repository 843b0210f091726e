"""Request dependencies as Annotated aliases: routes declare what they need, never build it."""

from dataclasses import dataclass, field
from typing import Annotated
from uuid import UUID

from arq.connections import ArqRedis
from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from psycopg_pool import AsyncConnectionPool
from starlette.applications import Starlette

from agents.common.context import AgentContext
from backend.middleware.rate_limits import RateLimited, RateLimiter, note
from backend.resources import ApiResources
from backend.web.browser import csrf_refusal, foreign_origin, session_token
from backend.web.language import note_project_language
from core.llm.local import SERVER_CHILD
from core.messages import Text
from core.retrieval import Retriever
from core.runtime import Runtime
from core.settings import Settings
from core.store.accounts import api_keys, projects, sessions
from core.store.accounts.projects import Project
from core.store.sql.access import ProjectScope

_bearer = HTTPBearer(
    auto_error=False,
    description="An API key (POST /me/keys, `studyai users create EMAIL`); the web app uses a cookie.",
)


# The app's state, set once by its lifespan (backend/main.py): read here and nowhere else.
def runtime_of(app: Starlette) -> Runtime:
    return app.state.runtime


def api_resources_of(app: Starlette) -> ApiResources:
    return app.state.api_resources


def rate_limiter_of(app: Starlette) -> RateLimiter | None:
    """None when RATE_LIMIT_ENABLED is false, and in an app served without its lifespan (nothing opened)."""
    resources: ApiResources | None = getattr(app.state, "api_resources", None)
    return resources.rate_limiter if resources is not None else None


def get_runtime(request: Request) -> Runtime:
    return runtime_of(request.app)


def get_api_resources(request: Request) -> ApiResources:
    return api_resources_of(request.app)


def get_settings(request: Request) -> Settings:
    return get_runtime(request).settings


def get_pool(request: Request) -> AsyncConnectionPool:
    """The pool itself, not a connection: a route borrows one per unit of SQL work
    (`async with db.connection() as conn`) and gives it back before any model call, stream or
    embedding, so no request holds a connection while it waits on something else."""
    return get_runtime(request).pool


def get_queue(request: Request) -> ArqRedis:
    return get_runtime(request).redis


def get_retriever(request: Request) -> Retriever:
    return get_runtime(request).retriever


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
ApiResourcesDep = Annotated[ApiResources, Depends(get_api_resources)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
RetrieverDep = Annotated[Retriever, Depends(get_retriever)]
DbDep = Annotated[AsyncConnectionPool, Depends(get_pool)]
QueueDep = Annotated[ArqRedis, Depends(get_queue)]


@dataclass(frozen=True)
class CurrentUser:
    id: UUID
    email: str
    key_id: UUID | None = None  # the API key this request came with
    session_id: UUID | None = None  # or the browser session (cookie) it came with
    csrf_token: str | None = field(default=None, repr=False)  # that session's, sent back by the app
    is_admin: bool = False


def get_rate_limiter(request: Request) -> RateLimiter | None:
    return rate_limiter_of(request.app)  # None: RATE_LIMIT_ENABLED=false


async def get_current_user(
    request: Request,
    db: DbDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    limiter: Annotated[RateLimiter | None, Depends(get_rate_limiter)],
) -> CurrentUser:
    """The caller, checked in SQL on every request (a revoked or expired key or session, or a disabled
    account, fails at once), then the user's rate-limit budget for this route
    (backend/middleware/rate_limits.py). An API key (Authorization: Bearer) wins over a session cookie; a
    cookie-authenticated write must carry the session's CSRF token and no foreign Origin (403). A wrong
    key spends the address's failure budget, and only wrong keys are refused once it is spent: a valid
    key or session from the same address (a class behind one NAT) always works."""
    if credentials is not None and credentials.scheme.lower() == "bearer":
        user = await _key_user(request, db, limiter, credentials.credentials)
    elif cookie := session_token(request, get_settings(request)):
        user = await _session_user(request, db, cookie)
    else:
        # Not a guess: only wrong keys spend the failure budget (requests without one, the address's).
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            Text("signin.not_signed_in"),
            headers={"WWW-Authenticate": "Bearer"},
        )
    if limiter is not None:
        verdict = await limiter.limit_user(request.scope, user.id)
        if verdict is not None and not verdict.allowed:
            raise RateLimited(verdict, Text("rate.user_limited"))
    return user


async def _key_user(
    request: Request, db: AsyncConnectionPool, limiter: RateLimiter | None, key: str
) -> CurrentUser:
    async with db.connection() as conn:
        holder = await api_keys.user_for_key(conn, key)
    if holder is None:
        if limiter is not None:
            verdict = await limiter.auth_failed(request.scope)
            if verdict is not None and not verdict.allowed:
                note(request.scope, verdict)
                raise RateLimited(verdict, Text("signin.too_many_bad_keys"))
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "Invalid, revoked or expired API key.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return CurrentUser(id=holder.id, email=holder.email, key_id=holder.key_id, is_admin=holder.is_admin)


async def _session_user(request: Request, db: AsyncConnectionPool, cookie: str) -> CurrentUser:
    """A stale cookie is not a guess (it is 256 random bits): it spends no failure budget."""
    settings = get_settings(request)
    async with db.connection() as conn:
        holder = await sessions.holder_of(conn, cookie, idle_minutes=settings.accounts.session_idle_minutes)
    if holder is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            Text("signin.session_ended"),
            headers={"WWW-Authenticate": "Bearer"},
        )
    if refusal := csrf_refusal(request, holder, settings):
        raise HTTPException(status.HTTP_403_FORBIDDEN, refusal)
    return CurrentUser(
        id=holder.id,
        email=holder.email,
        session_id=holder.session_id,
        csrf_token=holder.csrf_token,
        is_admin=holder.is_admin,
    )


UserDep = Annotated[CurrentUser, Depends(get_current_user)]
LimiterDep = Annotated[RateLimiter | None, Depends(get_rate_limiter)]


def refuse_foreign_origin(request: Request, settings: SettingsDep) -> None:
    """Sign-in routes set a cookie without one to check: a cross-site post (login CSRF) is refused."""
    if foreign_origin(request, settings):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "Cross-site request refused: its Origin is not this app's."
        )


SameOrigin = Depends(refuse_foreign_origin)


async def get_admin(user: UserDep) -> CurrentUser:
    if not user.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Only an administrator can do this.")
    return user


AdminDep = Annotated[CurrentUser, Depends(get_admin)]


@dataclass(frozen=True)
class ProjectAccess:
    project: Project
    user: CurrentUser

    @property
    def id(self) -> UUID:
        return self.project.id

    @property
    def role(self) -> str:
        return self.project.role

    @property
    def scope(self) -> ProjectScope:
        return ProjectScope(project_id=self.id, user_id=self.user.id)


def project_not_found() -> HTTPException:
    # Same answer whether the project does not exist or the caller is not a member: no probing.
    return HTTPException(status.HTTP_404_NOT_FOUND, Text("project.not_found"))


async def get_project_access(project_id: UUID, request: Request, db: DbDep, user: UserDep) -> ProjectAccess:
    async with db.connection() as conn:
        project = await projects.get_project(conn, project_id=project_id, user_id=user.id)
    if project is None:
        raise project_not_found()
    note_project_language(request, project.language)  # this request's refusals are said in it
    return ProjectAccess(project=project, user=user)


async def get_project_writer(access: Annotated[ProjectAccess, Depends(get_project_access)]) -> ProjectAccess:
    if access.role not in ("owner", "editor"):
        raise HTTPException(status.HTTP_403_FORBIDDEN, Text("project.viewers_cannot_change"))
    return access


async def get_project_owner(access: Annotated[ProjectAccess, Depends(get_project_access)]) -> ProjectAccess:
    if access.role != "owner":
        raise HTTPException(status.HTTP_403_FORBIDDEN, Text("project.owner_only"))
    return access


MODEL_RESTART_RETRY_S = 30


async def get_agent_context(
    runtime: RuntimeDep,
    resources: ApiResourcesDep,
    access: Annotated[ProjectAccess, Depends(get_project_access)],
) -> AgentContext:
    """A fresh context per request: the project and caller come from the membership check. While the
    embedded model server is being restarted (it died, or hung and was killed) a model request answers 503
    at once rather than waiting on a server that is not there."""
    supervisor = resources.supervisor
    server = supervisor.states().get(SERVER_CHILD) if supervisor is not None else None
    if server is not None and server.status != "running":
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            Text("qa.model_restarting", reason=server.last_exit or server.status),
            headers={"Retry-After": str(MODEL_RESTART_RETRY_S)},
        )
    llm = runtime.llm
    if llm is None:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "No chat model is configured: set LLM_BASE_URL, or run `studyai up` for the local one.",
        )
    return AgentContext(
        project_id=access.id,
        user_id=access.user.id,
        language=access.project.language,
        retriever=runtime.retriever,
        llm=llm,
        structured_mode=runtime.chat.structured_mode,
        thresholds=runtime.thresholds,
        confidence=await runtime.calibrations.current(),
        replies=runtime.replies,
    )


ProjectDep = Annotated[ProjectAccess, Depends(get_project_access)]
AgentContextDep = Annotated[AgentContext, Depends(get_agent_context)]
ProjectWriterDep = Annotated[ProjectAccess, Depends(get_project_writer)]
ProjectOwnerDep = Annotated[ProjectAccess, Depends(get_project_owner)]
