"""The HTML an LTI launch answers with, inside the LMS's frame. The launch page does not sign the frame
in (a SameSite=Lax cookie set there is not sent back, and browsers block third-party cookies): it
opens the app in a new top-level window through a one-time ticket (GET /auth/ticket/{ticket}), or goes
there itself when it is not framed (the LMS opened the tool in a window of its own). The ticket's page
asks "Continue as …?" and signs the browser in only when the person clicks: a captured launch replayed
in someone else's browser cannot switch it to another identity unseen (login CSRF)."""

import html
import json
import secrets
from urllib.parse import urlsplit

from starlette.responses import HTMLResponse

from core.store.accounts.lti import Platform


def _origin(url: str | None) -> str | None:
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else None


def frame_ancestors(platform: Platform | None, return_url: str | None = None) -> str:
    """Who may frame our pages: the platform's registered origins (issuer, login URL) and the origin the
    signed launch says it returns to (Canvas frames tools on the school's own domain, not its issuer's).
    A refusal before the platform is known (an unknown state) is text only: any frame may show it."""
    if platform is None:
        return "*"
    origins = {_origin(platform.issuer), _origin(platform.auth_login_url), _origin(return_url)}
    return " ".join(sorted(origin for origin in origins if origin)) or "'none'"


def _page(
    title: str,
    body: str,
    status: int,
    ancestors: str,
    script: str = "",
    form_action: str = "'none'",
    referrer: str = "no-referrer",
) -> HTMLResponse:
    nonce = secrets.token_urlsafe(16)
    script_tag = f'<script nonce="{nonce}">{script}</script>' if script else ""
    document = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>body{{font:16px system-ui,sans-serif;margin:2rem}}"
        " .button{display:inline-block;border:0;font:inherit;cursor:pointer;padding:.6rem 1.2rem;"
        "background:#1d4ed8;color:#fff;"
        f"border-radius:.4rem;text-decoration:none}}</style></head><body>{body}{script_tag}</body></html>"
    )
    headers = {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{nonce}';"
            f" frame-ancestors {ancestors}; base-uri 'none'; form-action {form_action}"
        ),
        "Cache-Control": "no-store",
        # The launch page holds the ticket in a link: no Referer leaves it. The confirmation posts to
        # ourselves, and with no-referrer browsers send `Origin: null`, which the same-origin check refuses.
        "Referrer-Policy": referrer,
    }
    return HTMLResponse(document, status_code=status, headers=headers)


def launch_page(ticket_url: str, project_name: str, ancestors: str) -> HTMLResponse:
    link = html.escape(ticket_url, quote=True)
    body = (
        f"<h1>{html.escape(project_name)}</h1><p>studyAI opens in a window of its own.</p>"
        f'<p><a class=button id=open href="{link}" target=_blank rel=noopener>Open studyAI</a></p>'
        "<p><small>The link works once, for two minutes; launch again from the course after that."
        "</small></p>"
    )
    # Not framed: go there at once. Framed: a click opens the window (a pop-up without one is blocked).
    script = f"if (window.top === window) {{ location.replace({json.dumps(ticket_url)}); }}"
    return _page("studyAI", body, 200, ancestors, script.replace("</", "<\\/"))


def refusal_page(reason: str, status: int, ancestors: str) -> HTMLResponse:
    body = f"<h1>studyAI cannot open</h1><p>{html.escape(reason)}</p>"
    return _page("studyAI cannot open", body, status, ancestors)


def confirm_page(ticket: str, name: str, email: str | None) -> HTMLResponse:
    """Continue as this person? A same-origin form posts the ticket (POST /auth/ticket)."""
    shown = html.escape(name)
    address = f" ({html.escape(email)})" if email else ""
    body = (
        f"<h1>Continue as {shown}?</h1><p>Your course opened studyAI for <strong>{shown}</strong>"
        f"{address}. Continuing signs this browser in as that account.</p>"
        '<form method=post action="/auth/ticket">'
        f'<input type=hidden name=ticket value="{html.escape(ticket, quote=True)}">'
        "<p><button class=button type=submit id=continue>Continue</button>"
        ' <a href="/app/" id=cancel>Cancel</a></p></form>'
    )
    return _page("studyAI: continue?", body, 200, "'none'", form_action="'self'", referrer="same-origin")
