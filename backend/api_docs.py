"""The API's interactive documentation at /docs, from Swagger UI vendored in frontend/vendor/swagger-ui
(served with the app's files at /app): a school's network may have no internet, and FastAPI's default
page loads Swagger UI from a CDN, which leaves it blank there. ReDoc (also from a CDN) is not served."""

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from backend.frontend import MOUNT_PATH

ASSETS = f"{MOUNT_PATH}/vendor/swagger-ui"


def add_api_docs(app: FastAPI) -> None:
    """GET /docs (outside the OpenAPI schema), for an app made with docs_url=None and redoc_url=None."""

    @app.get("/docs", include_in_schema=False)
    async def api_docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} — API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
        )
