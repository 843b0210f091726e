"""Accounts, one domain: who people are and how they get in.

- `service/`: what happens, on a connection pool and plain values, never a request. The one way to
  create or link an account (people.py: set-up, sign-up, invitations, OIDC and LTI all call it), the
  password policy and credentials that end together (credentials.py), sign-in and sessions
  (sign_in.py), invitations by code and by e-mail (invitations.py), administration (admin.py), mail
  (mail.py). Each writes its own security events and raises the domain errors of errors.py.
- `errors.py` / `http.py`: the refusals, and the one module that gives each its HTTP status.
- `schemas.py`: the pydantic models at the edge, the `Email` type that normalises once.
- `budgets.py`: the sign-in budgets that stop guessers, not classmates.
- `routers/`: by audience (sign-in, the account itself, administrators, invitations); `oidc/` and
  `lti/`: the school's login and the LMS, each with its own router.

Cookies, CSRF and Origin rules live in backend/web/browser.py, shared with every domain."""
