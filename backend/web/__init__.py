"""The HTTP layer every domain shares: the browser's rules (cookies, CSRF, Origin, HSTS: browser.py) and
the request's audit context (audit.py). Domain packages (backend/accounts, ...) import this, the request
dependencies (backend/deps.py), the middleware and lower layers, never another domain."""
