"""The API as `studyai up` serves it (backend/cli/app.serve: uvicorn, its access log off, the app's own
access line), in a process of its own for the attacker's tests: `python -m tests.security.serve PORT`,
configured by the environment (DATABASE_URL, REDIS_URL, STUDYAI_DATA_DIR, the accounts' settings). Like
`studyai up`, it announces the set-up link while the server has no administrator."""

import sys

from backend.cli.app import configure_logging, serve
from backend.cli.user_admin import announce_setup, base_url
from backend.main import create_app
from core.runtime.services import ServiceUrls
from core.settings import Settings


def main() -> None:
    port = int(sys.argv[1])
    configure_logging()
    settings = Settings()
    assert settings.services.database_url and settings.services.redis_url
    urls = ServiceUrls(database_url=settings.services.database_url, redis_url=settings.services.redis_url)
    announce_setup(urls.database_url, settings, base_url(settings, "127.0.0.1", port))
    serve(create_app(settings, urls), host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
