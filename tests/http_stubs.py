"""What the tests' small HTTP servers (http.server handlers standing in for another service) share."""

from http.server import BaseHTTPRequestHandler


def send(
    handler: BaseHTTPRequestHandler, data: bytes, content_type: str = "application/json", status: int = 200
) -> None:
    """Answers the handler's request with `data`, its type and length in the headers."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
