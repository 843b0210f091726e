"""Several people and roles, stepped at random by Hypothesis's rule-based state machine on the real
server: projects created, people invited by e-mail (accepting or declining), codes made and used, roles
changed, members removed or leaving, reset links asked for. After every step the invariants hold:

- nobody reads a project they are not a member of (404), and everyone's projects and roles are exactly
  those the owners granted and they accepted (a role is never gained without an owner's say, and joining
  never lowers one); an invitation addressed to an account whose address is unproven never reaches it;
- a viewer never sees another viewer in the member list;
- no secret appears in an answer to anyone but its owner: an account's API key only in the answer that
  created it, a project's invitation code only in answers to its owners (and to whoever used it)."""

from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from tests.security.people import api_key, bearer, new_email, sql
from tests.security.stack import Stack

RANK = {"owner": 0, "editor": 1, "viewer": 2}
ROLES = st.sampled_from(["owner", "editor", "viewer"])
PEOPLE = 4
UNPROVEN = 3  # this one signed up with a password: its address is proven by nothing


@dataclass
class Person:
    id: str
    email: str
    key: str
    http: httpx.Client
    seen: list[str] = field(default_factory=list)  # every answer this person received, since the check

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = self.http.request(method, path, headers=bearer(self.key), **kwargs)
        self.seen.append(response.text)
        return response


def higher(a: str | None, b: str) -> str:
    return b if a is None or RANK[b] < RANK[a] else a


class Accounts(RuleBasedStateMachine):
    stack: Stack  # set by the test before the machine runs

    def __init__(self) -> None:
        super().__init__()
        self.people: list[Person] = []
        for n in range(PEOPLE):
            email = new_email(f"p{n}")
            proven = "now()" if n != UNPROVEN else "NULL"
            query = f"INSERT INTO users (email, email_verified_at) VALUES (%s, {proven}) RETURNING id"
            [row] = sql(self.stack, query, (email,))
            key = api_key(self.stack, row["id"])
            self.people.append(Person(str(row["id"]), email, key, self.stack.client()))
        self.roles: dict[str, dict[int, str]] = {}  # project -> person -> role
        self.pending: dict[tuple[str, int], str] = {}  # (project, invitee) -> role
        self.codes: dict[str, tuple[str, str]] = {}  # project -> (code, role)
        self.knows_code: dict[str, set[int]] = {}  # who was ever shown the project's code

    def teardown(self) -> None:
        for person in self.people:
            person.http.close()

    def project(self, data: st.DataObject) -> str | None:
        return data.draw(st.sampled_from(sorted(self.roles))) if self.roles else None

    @rule(who=st.integers(0, PEOPLE - 1))
    def create_project(self, who: int) -> None:
        response = self.people[who].call("POST", "/projects", json={"name": "p"})
        assert response.status_code == 201, response.text
        self.roles[response.json()["id"]] = {who: "owner"}

    @rule(data=st.data(), who=st.integers(0, PEOPLE - 1), whom=st.integers(0, PEOPLE - 1), role=ROLES)
    def invite(self, data: st.DataObject, who: int, whom: int, role: str) -> None:
        if (project := self.project(data)) is None:
            return
        body = {"email": self.people[whom].email, "role": role}
        response = self.people[who].call("POST", f"/projects/{project}/members", json=body)
        mine = self.roles[project].get(who)
        if mine == "owner":
            assert response.status_code == 202, response.text
            assert self.people[whom].id not in response.text
            self.pending[(project, whom)] = role
        else:
            assert response.status_code == (404 if mine is None else 403), response.text

    @rule(data=st.data(), whom=st.integers(0, PEOPLE - 1), accept=st.booleans())
    def answer(self, data: st.DataObject, whom: int, accept: bool) -> None:
        person = self.people[whom]
        received = person.call("GET", "/me/invitations").json()
        # An invitation reaches only a proven address: the unproven account sees (and answers) none.
        expected = {project for (project, invitee) in self.pending if invitee == whom and whom != UNPROVEN}
        assert {row["project_id"] for row in received} == expected
        if whom == UNPROVEN:  # nor can it answer one by its id
            for row in sql(self.stack, "SELECT id FROM member_invitations WHERE email = %s", (person.email,)):
                assert person.call("POST", f"/me/invitations/{row['id']}/accept").status_code == 404
        if not received:
            return
        row = data.draw(st.sampled_from(received))
        if accept:
            response = person.call("POST", f"/me/invitations/{row['id']}/accept")
            assert response.status_code == 200, response.text
            role = higher(self.roles[row["project_id"]].get(whom), self.pending[(row["project_id"], whom)])
            self.roles[row["project_id"]][whom] = role
            assert response.json()["role"] == role
        else:
            assert person.call("DELETE", f"/me/invitations/{row['id']}").status_code == 204
        del self.pending[(row["project_id"], whom)]

    @rule(data=st.data(), who=st.integers(0, PEOPLE - 1), role=ROLES)
    def make_code(self, data: st.DataObject, who: int, role: str) -> None:
        if (project := self.project(data)) is None:
            return
        response = self.people[who].call("POST", f"/projects/{project}/invitations", json={"role": role})
        mine = self.roles[project].get(who)
        if mine == "owner":
            assert response.status_code == 201, response.text
            self.codes[project] = (response.json()["code"], role)
            self.knows_code.setdefault(project, set()).add(who)
        else:
            assert response.status_code == (404 if mine is None else 403), response.text

    @rule(data=st.data(), whom=st.integers(0, PEOPLE - 1))
    def join_with_code(self, data: st.DataObject, whom: int) -> None:
        if not self.codes:
            return
        project = data.draw(st.sampled_from(sorted(self.codes)))
        if project not in self.roles:
            return
        code, role = self.codes[project]
        response = self.people[whom].call("POST", "/join", json={"code": code})
        assert response.status_code == 200, response.text
        self.roles[project][whom] = higher(self.roles[project].get(whom), role)
        self.knows_code[project].add(whom)

    @rule(data=st.data(), who=st.integers(0, PEOPLE - 1), whom=st.integers(0, PEOPLE - 1), role=ROLES)
    def change_role(self, data: st.DataObject, who: int, whom: int, role: str) -> None:
        if (project := self.project(data)) is None:
            return
        roles = self.roles[project]
        response = self.people[who].call(
            "PATCH", f"/projects/{project}/members/{self.people[whom].id}", json={"role": role}
        )
        if roles.get(who) is None:
            assert response.status_code == 404
        elif roles[who] != "owner":
            assert response.status_code == 403
        elif whom not in roles:
            assert response.status_code == 404
        elif roles[whom] == "owner" and role != "owner" and list(roles.values()).count("owner") == 1:
            assert response.status_code == 409
        else:
            assert response.status_code == 200, response.text
            roles[whom] = role

    @rule(data=st.data(), who=st.integers(0, PEOPLE - 1), whom=st.integers(0, PEOPLE - 1))
    def remove(self, data: st.DataObject, who: int, whom: int) -> None:
        if (project := self.project(data)) is None:
            return
        roles = self.roles[project]
        response = self.people[who].call("DELETE", f"/projects/{project}/members/{self.people[whom].id}")
        if roles.get(who) is None:
            assert response.status_code == 404
        elif who != whom and roles[who] != "owner":
            assert response.status_code == 403
        elif whom not in roles:
            assert response.status_code == 404
        elif roles[whom] == "owner" and list(roles.values()).count("owner") == 1:
            assert response.status_code == 409
        else:
            assert response.status_code == 204, response.text
            del roles[whom]

    @rule(data=st.data(), who=st.integers(0, PEOPLE - 1), whom=st.integers(0, PEOPLE - 1))
    def ask_for_a_reset_link(self, data: st.DataObject, who: int, whom: int) -> None:
        target = self.people[whom].id
        paths = [f"/admin/users/{target}/reset-link"]
        if (project := self.project(data)) is not None:
            paths.append(f"/projects/{project}/members/{target}/reset-link")
        for path in paths:
            response = self.people[who].call("POST", path)
            assert response.status_code in (403, 404, 405) and "token=" not in response.text

    @invariant()
    def everyone_reads_exactly_their_projects(self) -> None:
        for n, person in enumerate(self.people):
            listed = person.call("GET", "/projects", params={"limit": 200}).json()
            mine = {row["id"]: row["role"] for row in listed if row["id"] in self.roles}
            assert mine == {p: roles[n] for p, roles in self.roles.items() if n in roles}
            for project, roles in self.roles.items():
                if n not in roles:
                    assert person.call("GET", f"/projects/{project}").status_code == 404
                elif roles[n] == "viewer":
                    members = person.call("GET", f"/projects/{project}/members").json()["members"]
                    others = {m["user_id"] for m in members if m["role"] == "viewer"} - {person.id}
                    assert not others, "a viewer sees another viewer"

    @invariant()
    def no_secret_reaches_anyone_else(self) -> None:
        for n, person in enumerate(self.people):
            seen = "\n".join(person.seen)
            for m, other in enumerate(self.people):
                if m != n:
                    assert other.key not in seen
            for project, (code, _) in self.codes.items():
                if code in seen:
                    assert (
                        n in self.knows_code.get(project, set())
                        or self.roles.get(project, {}).get(n) == "owner"
                    )
            person.seen.clear()


def test_roles_and_secrets_hold_at_every_step(stack: Stack) -> None:
    Accounts.stack = stack
    run_state_machine_as_test(
        Accounts,
        settings=settings(
            max_examples=12,
            stateful_step_count=25,
            deadline=None,
            derandomize=True,  # the same examples in every run: CI is not a lottery
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
