"""A local stand-in for the GitHub REST API (api.github.com at `/`, GitHub Enterprise at `/api/v3`). NOT GitHub.

Every request it receives and every response it sends is validated against GitHub's published OpenAPI
description (tests/fixtures/formats/github-rest-subset.openapi.json, from @octokit/openapi) with
openapi-core; a mismatch is recorded in `problems` (asserted empty when the test ends) and the request is
answered 400, so a client that strays fails loudly. Response objects are built from the description's own
schemas (every required field, then the values this stand-in tracks), so PyGithub parses what it would
parse from GitHub.

Models, for one repository: GET repo; issues (list with state/labels/sort/direction filters and Link pagination,
get, create, edit incl. state open/closed, labels, assignees); issue comments (list, create); labels (list,
create); pulls (list with state/head/base filters, get, create — 422 for a second open pull request from the
same head to the same base — edit incl. close); `GET /user`, the token's own user (`login`; with
`installation=True` it answers 403 "Resource not accessible by integration", as GitHub does for a GitHub App
installation token); issues and pulls seeded as opened by someone else (`seed_issue`, `seed_pull` with
`author`); `GET /search/issues` for `repo:`, `label:`, `is:issue|pr`, `is:open|closed` and quoted body text;
commit statuses (create on any SHA, list a SHA's newest first with Link pagination, 422 past 1,000 statuses for
one SHA and context, as GitHub documents), stamped by `status_clock` (seconds; the real time unless a test
scripts it). Issues and pulls share one number space and pulls appear in the issues list with a `pull_request`
key, as on GitHub. Token check (401 Bad credentials). Faults (`inject`): any status with headers, e.g. 403
`X-RateLimit-Remaining: 0`, a secondary limit, 429 `Retry-After`, 5xx.

Does NOT model: commits (a status's SHA is not checked to exist), the combined status, other repositories, users
and permissions, branches (a pull's head branch is not checked to exist), merging, reviews, label colours beyond
a default, reactions, timelines, ETags/conditional requests, GraphQL, the search index lag. Responses with a
status the description does not list for the operation (401, 429, 5xx) are not validated.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from tests.support.githost._common import NOW, HttpError, Recorded, Reply, StandInServer

SPEC = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "github-rest-subset.openapi.json"


@cache
def _spec_dict() -> dict[str, Any]:
    return json.loads(SPEC.read_text())


@cache
def _openapi() -> Any:
    from openapi_core import OpenAPI

    return OpenAPI.from_dict(_spec_dict())


def _operation(method: str, template: str) -> dict[str, Any]:
    return _spec_dict()["paths"][template][method.lower()]


def skeleton(schema: dict[str, Any], *, null_ok: bool = True) -> Any:
    """A minimal valid instance of `schema`: required properties only, from examples where given; null where
    allowed unless `null_ok` is false (the object itself is wanted)."""
    if schema.get("nullable") and null_ok:
        return None
    for key in ("allOf",):
        if key in schema:
            merged: dict[str, Any] = {}
            for part in schema[key]:
                value = skeleton(part, null_ok=null_ok)
                if isinstance(value, dict):
                    merged |= value
            return merged
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return skeleton(schema[key][0], null_ok=null_ok)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {name: skeleton(props.get(name, {})) for name in schema.get("required", [])}
    if kind == "array":
        return []
    if kind == "integer":
        return int(schema.get("example", 1)) if isinstance(schema.get("example"), int) else 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return False
    if kind == "string":
        fmt = schema.get("format")
        if fmt == "date-time":
            return NOW
        if fmt == "uri":
            return "https://github.invalid/x"
        example = schema.get("example")
        return example if isinstance(example, str) else "x"
    return None


def _response_schema(method: str, template: str, status: int) -> dict[str, Any] | None:
    response = _operation(method, template)["responses"].get(str(status))
    if not response or "content" not in response:
        return None
    return response["content"]["application/json"]["schema"]


def _template_item(method: str, template: str, status: int) -> Any:
    schema = _response_schema(method, template, status)
    assert schema is not None, (method, template, status)
    return skeleton(schema["items"] if schema.get("type") == "array" else schema, null_ok=False)


def _match(path: str) -> tuple[str, dict[str, str]] | None:
    for template in _spec_dict()["paths"]:
        pattern = "^" + re.sub(r"\{([^}]+)\}", r"(?P<\1>[^/]+)", template) + "$"
        found = re.match(pattern, path)
        if found:
            return template, found.groupdict()
    return None


class GitHubStandIn(StandInServer):
    def __init__(
        self,
        owner: str = "acme",
        repo: str = "gitops",
        *,
        prefix: str = "",
        token: str = "test-token",
        default_branch: str = "main",
        login: str = "kai-gitops-bot",
        installation: bool = False,
    ) -> None:
        super().__init__(prefix, token)
        self.owner, self.name, self.default_branch = owner, repo, default_branch
        self.login = login  # who the token writes as
        self.installation = installation  # an installation token: GET /user is refused
        self.issues: dict[int, dict[str, Any]] = {}  # number -> issue object (pulls too, with pull_request)
        self.pulls: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.labels: dict[str, dict[str, Any]] = {}
        self._ids = 1000
        self._clock = 0
        self.statuses: dict[str, list[dict[str, Any]]] = {}  # sha -> its statuses, newest first
        self.status_clock: Callable[[], float] = time.time

    # -- helpers --------------------------------------------------------------------------------------------
    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def repo_url(self) -> str:
        return f"{self.url}/repos/{self.full_name}"

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    def _tick(self) -> str:
        self._clock += 1
        return f"2026-12-01T08:{self._clock // 60 % 60:02d}:{self._clock % 60:02d}Z"

    def _user(self, login: str = "kai-gitops-bot") -> dict[str, Any]:
        user = skeleton(
            _spec_dict()["paths"]["/repos/{owner}/{repo}/issues/{issue_number}"]["get"]["responses"]["200"]["content"][
                "application/json"
            ]["schema"]["properties"]["user"],
            null_ok=False,
        )
        return user | {
            "login": login,
            "id": 7,
            "url": f"{self.url}/users/{login}",
            "html_url": f"https://github.invalid/{login}",
        }

    def _label(self, name: str) -> dict[str, Any]:
        if name not in self.labels:
            label = _template_item("GET", "/repos/{owner}/{repo}/labels", 200)
            self.labels[name] = label | {
                "id": self._next_id(),
                "name": name,
                "color": "ededed",
                "default": False,
                "url": f"{self.repo_url}/labels/{name}",
                "description": "",
            }
        return self.labels[name]

    def seed_issue(self, title: str, body: str, labels: list[str], author: str | None = None) -> int:
        """An issue created inside the stand-in (no HTTP), to set up long listings cheaply; `author`: opened by
        another user than the token's."""
        issue = self.create_issue({}, {"title": title, "body": body, "labels": labels}, {}).body
        if author is not None:
            issue["user"] = self._user(author)
        return int(issue["number"])

    def seed_pull(self, head: str, base: str, title: str, body: str, author: str) -> int:
        """An open pull request opened by `author` (no HTTP)."""
        pull = self.create_pull({}, {"head": head, "base": base, "title": title, "body": body}, {}).body
        pull["user"] = self.issues[pull["number"]]["user"] = self._user(author)
        return int(pull["number"])

    def _number(self) -> int:
        return max([0, *self.issues]) + 1

    # -- contract -------------------------------------------------------------------------------------------
    def authorised(self, headers: dict[str, str]) -> bool:
        value = headers.get("authorization", "")
        return value in (f"token {self.token}", f"Bearer {self.token}")

    def unauthorised(self) -> Reply:
        return Reply(401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})

    def error_body(self, error: HttpError) -> dict[str, Any]:
        return {"message": error.message, "documentation_url": "https://docs.github.com/rest", **error.extra}

    def check_request(self, recorded: Recorded) -> None:
        from openapi_core.testing import MockRequest

        if _match(recorded.path) is None:
            self._problem(f"{recorded.method} {recorded.path}: no such path in GitHub's description")
            raise HttpError(404, "Not Found")
        request = MockRequest(
            "https://api.github.com",
            recorded.method,
            recorded.path,
            args=recorded.query,
            headers=recorded.headers,
            data=recorded.body or None,
            content_type=recorded.headers.get("content-type", "application/json").split(";")[0],
        )
        errors = list(_openapi().iter_request_errors(request))
        if errors:
            self._problem(
                f"{recorded.method} {recorded.path}: request violates GitHub's description: "
                + "; ".join(_why(e) for e in errors)
            )
            raise HttpError(400, "request does not match GitHub's OpenAPI description (stand-in)")

    def check_response(self, recorded: Recorded, reply: Reply, body: bytes) -> None:
        from openapi_core.testing import MockRequest, MockResponse

        found = _match(recorded.path)
        if found is None or (reply.status == 400 and any(recorded.path in p for p in self.problems)):
            return
        template, _ = found
        operation = _spec_dict()["paths"][template].get(recorded.method.lower())
        if operation is None or str(reply.status) not in operation["responses"]:
            return  # a status the description does not list (401, 429, 5xx faults): nothing to check against
        request = MockRequest(
            "https://api.github.com",
            recorded.method,
            recorded.path,
            args=recorded.query,
            headers=recorded.headers,
            data=recorded.body or None,
        )
        response = MockResponse(body, reply.status, reply.headers)
        errors = list(_openapi().iter_response_errors(request, response))
        if errors:
            self._problem(
                f"{recorded.method} {recorded.path} -> {reply.status}: response violates GitHub's "
                "description: " + "; ".join(_why(e) for e in errors)
            )

    def _problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(text)

    # -- routes ---------------------------------------------------------------------------------------------
    def route(self, method: str, path: str, query: dict[str, str], body: Any) -> Reply:
        found = _match(path)
        assert found is not None
        template, args = found
        if "owner" in args and (args["owner"], args["repo"]) != (self.owner, self.name):
            raise HttpError(404, "Not Found")
        handler = _HANDLERS.get((method, template))
        if handler is None:
            raise HttpError(404, "Not Found (not modelled by the stand-in)")
        return handler(self, query, body or {}, args)

    def get_user(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        if self.installation:
            raise HttpError(403, "Resource not accessible by integration")
        user = _template_item("GET", "/user", 200)
        return Reply(200, user | {k: v for k, v in self._user(self.login).items() if k in user})

    def get_repo(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        repo = _template_item("GET", "/repos/{owner}/{repo}", 200)
        owner = self._user(self.owner)
        repo |= {
            "id": 1,
            "name": self.name,
            "full_name": self.full_name,
            "owner": owner,
            "url": self.repo_url,
            "html_url": f"https://github.invalid/{self.full_name}",
            "default_branch": self.default_branch,
            "private": True,
        }
        return Reply(200, repo)

    def list_issues(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        state = query.get("state", "open")
        wanted = [w for w in query.get("labels", "").split(",") if w]
        items = [i for i in self.issues.values() if state == "all" or i["state"] == state]
        items = [i for i in items if all(w in {lb["name"] for lb in i["labels"]} for w in wanted)]
        key = {"created": "created_at", "updated": "updated_at", "comments": "comments"}[query.get("sort", "created")]
        items.sort(key=lambda i: (i[key], i["number"]), reverse=query.get("direction", "desc") == "desc")
        return self.page(items, query, path=f"/repos/{self.full_name}/issues", style="github")

    def create_issue(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        if not body.get("title"):
            raise HttpError(
                422, "Validation Failed", {"errors": [{"resource": "Issue", "code": "missing_field", "field": "title"}]}
            )
        number = self._number()
        issue = _template_item("POST", "/repos/{owner}/{repo}/issues", 201)
        stamp = self._tick()
        url = f"{self.repo_url}/issues/{number}"
        issue |= {
            "id": self._next_id(),
            "number": number,
            "title": str(body["title"]),
            "body": body.get("body"),
            "state": "open",
            "url": url,
            "repository_url": self.repo_url,
            "labels_url": f"{url}/labels{{/name}}",
            "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": f"https://github.invalid/{self.full_name}/issues/{number}",
            "user": self._user(self.login),
            "labels": [self._label(str(n)) for n in body.get("labels") or []],
            "assignees": [self._user(a) for a in body.get("assignees") or []],
            "assignee": None,
            "comments": 0,
            "created_at": stamp,
            "updated_at": stamp,
            "closed_at": None,
            "locked": False,
        }
        issue["assignee"] = issue["assignees"][0] if issue["assignees"] else None
        self.issues[number] = issue
        self.comments[number] = []
        return Reply(201, issue, {"Location": url})

    def get_issue(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        return Reply(200, self._issue(args["issue_number"]))

    def _issue(self, number: str) -> dict[str, Any]:
        issue = self.issues.get(int(number))
        if issue is None:
            raise HttpError(404, "Not Found")
        return issue

    def edit_issue(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        issue = self._issue(args["issue_number"])
        self._apply_issue_edit(issue, body)
        if issue.get("state_reason", "") is None:
            issue.pop("state_reason")
        if issue["number"] in self.pulls:
            self.pulls[issue["number"]] |= {
                k: issue[k] for k in ("labels", "assignees", "assignee", "title", "body", "state", "updated_at")
            }
        return Reply(200, issue)

    def _apply_issue_edit(self, issue: dict[str, Any], body: dict[str, Any]) -> None:
        for key in ("title", "body"):
            if key in body:
                issue[key] = body[key]
        if "state" in body and body["state"] != issue["state"]:
            issue["state"] = body["state"]
            issue["closed_at"] = self._tick() if body["state"] == "closed" else None
            issue["state_reason"] = body.get("state_reason") or (
                "completed" if body["state"] == "closed" else "reopened"
            )
        if "labels" in body:
            issue["labels"] = [self._label(n if isinstance(n, str) else n["name"]) for n in body["labels"]]
        if "assignees" in body:
            issue["assignees"] = [self._user(a) for a in body["assignees"]]
            issue["assignee"] = issue["assignees"][0] if issue["assignees"] else None
        issue["updated_at"] = self._tick()

    def list_comments(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        self._issue(args["issue_number"])
        number = int(args["issue_number"])
        return self.page(
            self.comments[number], query, path=f"/repos/{self.full_name}/issues/{number}/comments", style="github"
        )

    def create_comment(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        issue = self._issue(args["issue_number"])
        comment = _template_item("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", 201)
        comment_id = self._next_id()
        stamp = self._tick()
        comment |= {
            "id": comment_id,
            "body": body.get("body", ""),
            "user": self._user(self.login),
            "url": f"{self.repo_url}/issues/comments/{comment_id}",
            "html_url": f"{issue['html_url']}#issuecomment-{comment_id}",
            "issue_url": issue["url"],
            "created_at": stamp,
            "updated_at": stamp,
        }
        self.comments[issue["number"]].append(comment)
        issue["comments"] += 1
        issue["updated_at"] = stamp
        return Reply(201, comment, {"Location": comment["url"]})

    def list_labels(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        return self.page(list(self.labels.values()), query, path=f"/repos/{self.full_name}/labels", style="github")

    def create_label(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        if body.get("name") in self.labels:
            raise HttpError(
                422, "Validation Failed", {"errors": [{"resource": "Label", "code": "already_exists", "field": "name"}]}
            )
        label = self._label(str(body["name"]))
        label["color"] = body.get("color", label["color"])
        return Reply(201, label)

    def list_pulls(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        state = query.get("state", "open")
        items = [p for p in self.pulls.values() if state == "all" or p["state"] == state]
        if "head" in query:
            items = [p for p in items if p["head"]["label"] == query["head"]]
        if "base" in query:
            items = [p for p in items if p["base"]["ref"] == query["base"]]
        items.sort(key=lambda p: p["number"], reverse=True)
        return self.page(items, query, path=f"/repos/{self.full_name}/pulls", style="github")

    def create_pull(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        head, base = str(body.get("head", "")), str(body.get("base", ""))
        head_ref = head.split(":", 1)[-1]
        if any(
            p["state"] == "open" and p["head"]["ref"] == head_ref and p["base"]["ref"] == base
            for p in self.pulls.values()
        ):
            raise HttpError(
                422,
                "Validation Failed",
                {
                    "errors": [
                        {
                            "resource": "PullRequest",
                            "code": "custom",
                            "message": f"A pull request already exists for {self.owner}:{head_ref}.",
                        }
                    ]
                },
            )
        issue = self.create_issue(query, {"title": body.get("title"), "body": body.get("body")}, args).body
        number = issue["number"]
        pull = _template_item("POST", "/repos/{owner}/{repo}/pulls", 201)
        url = f"{self.repo_url}/pulls/{number}"
        html = f"https://github.invalid/{self.full_name}/pull/{number}"
        issue["pull_request"] = {
            "url": url,
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "merged_at": None,
        }
        issue["html_url"] = html
        pull |= {
            k: issue[k]
            for k in (
                "id",
                "number",
                "title",
                "body",
                "state",
                "labels",
                "assignees",
                "assignee",
                "user",
                "created_at",
                "updated_at",
                "closed_at",
                "locked",
            )
        }
        pull |= {
            "url": url,
            "html_url": html,
            "issue_url": issue["url"],
            "merged": False,
            "merged_at": None,
            "draft": bool(body.get("draft", False)),
            "head": self._branch(pull["head"], head_ref),
            "base": self._branch(pull["base"], base),
        }
        self.pulls[number] = pull
        return Reply(201, pull, {"Location": url})

    def _branch(self, template: dict[str, Any], ref: str) -> dict[str, Any]:
        schema = _response_schema("POST", "/repos/{owner}/{repo}/pulls", 201)
        assert schema is not None
        repo = skeleton(schema["properties"]["head"]["properties"]["repo"], null_ok=False)
        repo |= {
            "name": self.name,
            "full_name": self.full_name,
            "url": self.repo_url,
            "owner": self._user(self.owner),
            "default_branch": self.default_branch,
        }
        return template | {
            "ref": ref,
            "label": f"{self.owner}:{ref}",
            "repo": repo,
            "user": self._user(self.owner),
            "sha": "0" * 40,
        }

    def get_pull(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        pull = self.pulls.get(int(args["pull_number"]))
        if pull is None:
            raise HttpError(404, "Not Found")
        return Reply(200, pull)

    def edit_pull(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        pull = self.get_pull(query, body, args).body
        issue = self.issues[pull["number"]]
        self._apply_issue_edit(issue, {k: v for k, v in body.items() if k in ("title", "body", "state")})
        pull |= {k: issue[k] for k in ("title", "body", "state", "closed_at", "updated_at")}
        if "base" in body:
            pull["base"]["ref"] = body["base"]
        return Reply(200, pull)

    def search_issues(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        q = query.get("q", "")
        phrases = re.findall(r'"([^"]*)"', q)
        terms = re.sub(r'"[^"]*"', " ", q).split()
        items = list(self.issues.values())
        for term in terms:
            key, _, value = term.partition(":")
            if key == "repo" and value != self.full_name:
                items = []
            elif key == "label":
                items = [i for i in items if value.strip('"') in {lb["name"] for lb in i["labels"]}]
            elif key == "is" and value in ("issue", "pr"):
                items = [i for i in items if ("pull_request" in i) == (value == "pr")]
            elif key in ("is", "state") and value in ("open", "closed"):
                items = [i for i in items if i["state"] == value]
        items = [i for i in items if all(p in (i.get("body") or "") + i["title"] for p in phrases)]
        schema = _response_schema("GET", "/search/issues", 200)
        assert schema is not None
        item = skeleton(schema["properties"]["items"]["items"], null_ok=False)
        found = [
            item | {k: v for k, v in i.items() if k in item or k in ("body", "pull_request")} | {"score": 1.0}
            for i in items
        ]
        reply = self.page(found, query, path="/search/issues", style="github")
        reply.body = skeleton(schema, null_ok=False) | {
            "total_count": len(found),
            "incomplete_results": False,
            "items": reply.body,
        }
        return reply

    def create_status(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        sha, context = args["sha"], str(body.get("context") or "default")
        earlier = self.statuses.setdefault(sha, [])
        if sum(1 for s in earlier if s["context"] == context) >= 1000:
            raise HttpError(
                422,
                "Validation Failed",
                {
                    "errors": [
                        {
                            "resource": "Status",
                            "code": "custom",
                            "message": "This SHA and context has reached the maximum number of statuses.",
                        }
                    ]
                },
            )
        status = _template_item("POST", "/repos/{owner}/{repo}/statuses/{sha}", 201)
        status_id = self._next_id()
        stamp = datetime.fromtimestamp(self.status_clock(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        status |= {
            "id": status_id,
            "node_id": f"SC_{status_id}",
            "url": f"{self.repo_url}/statuses/{sha}",
            "state": body["state"],
            "description": body.get("description"),
            "context": context,
            "target_url": body.get("target_url"),
            "creator": self._user(self.login),
            "created_at": stamp,
            "updated_at": stamp,
        }
        earlier.insert(0, status)
        return Reply(201, status, {"Location": status["url"]})

    def list_statuses(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        ref = args["ref"]
        return self.page(
            self.statuses.get(ref, []), query, path=f"/repos/{self.full_name}/commits/{ref}/statuses", style="github"
        )


_HANDLERS = {
    ("GET", "/repos/{owner}/{repo}"): GitHubStandIn.get_repo,
    ("GET", "/repos/{owner}/{repo}/issues"): GitHubStandIn.list_issues,
    ("POST", "/repos/{owner}/{repo}/issues"): GitHubStandIn.create_issue,
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}"): GitHubStandIn.get_issue,
    ("PATCH", "/repos/{owner}/{repo}/issues/{issue_number}"): GitHubStandIn.edit_issue,
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments"): GitHubStandIn.list_comments,
    ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments"): GitHubStandIn.create_comment,
    ("GET", "/repos/{owner}/{repo}/labels"): GitHubStandIn.list_labels,
    ("POST", "/repos/{owner}/{repo}/labels"): GitHubStandIn.create_label,
    ("GET", "/repos/{owner}/{repo}/pulls"): GitHubStandIn.list_pulls,
    ("POST", "/repos/{owner}/{repo}/pulls"): GitHubStandIn.create_pull,
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}"): GitHubStandIn.get_pull,
    ("PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}"): GitHubStandIn.edit_pull,
    ("GET", "/search/issues"): GitHubStandIn.search_issues,
    ("GET", "/user"): GitHubStandIn.get_user,
    ("POST", "/repos/{owner}/{repo}/statuses/{sha}"): GitHubStandIn.create_status,
    ("GET", "/repos/{owner}/{repo}/commits/{ref}/statuses"): GitHubStandIn.list_statuses,
}


def _why(error: Exception) -> str:
    cause = error.__cause__ or error.__context__
    details = getattr(cause, "schema_errors", None) or getattr(error, "schema_errors", None)
    if details:
        return f"{type(error).__name__}: " + "; ".join(
            f"{'/'.join(map(str, getattr(d, 'absolute_path', ())))}: {str(getattr(d, 'message', d))[:200]}"
            for d in details
        )
    return f"{type(error).__name__}: {str(error)[:300]}{': ' + str(cause)[:300] if cause else ''}"
