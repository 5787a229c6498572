"""A local stand-in for the GitLab REST API v4 (gitlab.com at `/api/v4`, self-managed under a path prefix,
e.g. `/gitlab/api/v4`). NOT GitLab.

GitLab publishes no OpenAPI description for these endpoints (none exists in the fixtures), so this
stand-in follows the shapes of GitLab's REST documentation (docs.gitlab.com/api/: projects, issues, notes,
merge_requests, users, pagination, rate limits): request bodies are checked against the documented
attribute lists per endpoint (an unknown attribute, a missing required one or a wrong type is recorded in
`problems`, asserted empty when the test ends, and answered 400); responses carry the documented fields
python-gitlab reads.

Models, for one project: GET /projects/:id by numeric id or URL-encoded path; issues (list with labels, state,
order_by, sort and page/per_page pagination with Link and X-Page/X-Total headers; get; create with labels and
assignee_ids; PUT with title/description/labels/state_event close|reopen); issue notes (list, create); merge
requests (list with state/source_branch/target_branch, get, create — 409 for a second open MR from the same
source branch to the same target — PUT with title/description/state_event close; notes); commit statuses (POST
/projects/:id/statuses/:sha with the documented attributes and states, GET
/projects/:id/repository/commits/:sha/statuses newest first, paged; stamped by `status_clock`, the real time
unless a test scripts it; commits are not checked to exist); GET /users?username=; GET /user, the token's own
user (`login`); issues and merge requests seeded as opened by someone else (`seed_issue`, `seed_merge_request`
with `author`). PRIVATE-TOKEN check (401). Faults (`inject`): any status with headers, e.g. 429 `Retry-After` /
`RateLimit-Reset`, 5xx.

Does NOT model: groups, permissions, other projects, branches (a source branch is not checked to exist),
merging, approvals, pipelines, system notes, label objects and colours, keyset pagination, ETags, GraphQL.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from tests.support.githost._common import HttpError, Recorded, Reply, StandInServer

# Documented request attributes (docs.gitlab.com/api/issues.html, merge_requests.html, notes.html).
_ATTRIBUTES: dict[tuple[str, str], tuple[dict[str, type | tuple[type, ...]], set[str]]] = {
    ("POST", "issues"): (
        {
            "title": str,
            "description": str,
            "labels": str,
            "assignee_ids": list,
            "confidential": bool,
            "milestone_id": int,
            "due_date": str,
        },
        {"title"},
    ),
    ("PUT", "issue"): (
        {
            "title": str,
            "description": str,
            "labels": str,
            "assignee_ids": list,
            "state_event": str,
            "confidential": bool,
            "add_labels": str,
            "remove_labels": str,
        },
        set(),
    ),
    ("POST", "notes"): ({"body": str, "internal": bool, "created_at": str}, {"body"}),
    ("POST", "merge_requests"): (
        {
            "source_branch": str,
            "target_branch": str,
            "title": str,
            "description": str,
            "labels": str,
            "assignee_ids": list,
            "remove_source_branch": bool,
            "squash": bool,
        },
        {"source_branch", "target_branch", "title"},
    ),
    ("POST", "statuses"): (
        {
            "state": str,
            "ref": str,
            "name": str,
            "context": str,
            "target_url": str,
            "description": str,
            "coverage": (int, float),
            "pipeline_id": int,
        },
        {"state"},
    ),
    ("PUT", "merge_request"): (
        {
            "title": str,
            "description": str,
            "labels": str,
            "assignee_ids": list,
            "state_event": str,
            "target_branch": str,
            "remove_source_branch": bool,
        },
        set(),
    ),
}
_STATUS_STATES = {"pending", "running", "success", "failed", "canceled", "skipped"}
_STATE_EVENTS = {"issue": {"close", "reopen"}, "merge_request": {"close", "reopen"}}
_ROUTES = [
    ("project", re.compile(r"^/projects/(?P<project>[^/]+)$")),
    ("issues", re.compile(r"^/projects/(?P<project>[^/]+)/issues$")),
    ("issue", re.compile(r"^/projects/(?P<project>[^/]+)/issues/(?P<iid>\d+)$")),
    ("notes", re.compile(r"^/projects/(?P<project>[^/]+)/(?P<kind>issues|merge_requests)/(?P<iid>\d+)/notes$")),
    ("merge_requests", re.compile(r"^/projects/(?P<project>[^/]+)/merge_requests$")),
    ("merge_request", re.compile(r"^/projects/(?P<project>[^/]+)/merge_requests/(?P<iid>\d+)$")),
    ("commit_statuses", re.compile(r"^/projects/(?P<project>[^/]+)/repository/commits/(?P<sha>[^/]+)/statuses$")),
    ("statuses", re.compile(r"^/projects/(?P<project>[^/]+)/statuses/(?P<sha>[^/]+)$")),
    ("users", re.compile(r"^/users$")),
    ("user", re.compile(r"^/user$")),
]


class GitLabStandIn(StandInServer):
    def __init__(
        self,
        path: str = "acme/gitops",
        *,
        prefix: str = "",
        token: str = "test-token",
        users: tuple[str, ...] = ("alice", "bob"),
        login: str = "kai-gitops",
    ) -> None:
        super().__init__(prefix.rstrip("/") + "/api/v4", token)
        self.path, self.project_id = path, 42
        self.login = login  # who the token writes as
        self.users = {name: 100 + i for i, name in enumerate(users)}
        self.issues: dict[int, dict[str, Any]] = {}
        self.merge_requests: dict[int, dict[str, Any]] = {}
        self.notes: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self._ids, self._clock = 5000, 0
        self.statuses: dict[str, list[dict[str, Any]]] = {}  # sha -> its statuses, newest first
        self.status_clock: Callable[[], float] = time.time

    @property
    def instance_url(self) -> str:
        """What python-gitlab is given: the instance root, /api/v4 excluded."""
        return self.url.removesuffix("/api/v4")

    @property
    def web(self) -> str:
        return f"https://gitlab.invalid/{self.path}"

    def seed_issue(self, title: str, body: str, labels: list[str], author: str | None = None) -> int:
        """An issue created inside the stand-in (no HTTP), to set up long listings cheaply; `author`: opened by
        another user than the token's."""
        issue = self.post_issues({}, {"title": title, "description": body, "labels": ",".join(labels)}, {}).body
        if author is not None:
            issue["author"] = self._user(author)
        return int(issue["iid"])

    def seed_merge_request(self, source: str, target: str, title: str, body: str, author: str) -> int:
        """An open merge request opened by `author` (no HTTP)."""
        mr = self.post_merge_requests(
            {}, {"source_branch": source, "target_branch": target, "title": title, "description": body}, {}
        ).body
        mr["author"] = self._user(author)
        return int(mr["iid"])

    def authorised(self, headers: dict[str, str]) -> bool:
        return headers.get("private-token") == self.token

    def _tick(self) -> str:
        self._clock += 1
        return f"2026-12-01T08:{self._clock // 60 % 60:02d}:{self._clock % 60:02d}.000Z"

    def _id(self) -> int:
        self._ids += 1
        return self._ids

    # -- contract -------------------------------------------------------------------------------------------
    def check_request(self, recorded: Recorded) -> None:
        import json

        name, _ = self._match(recorded.path)
        spec = _ATTRIBUTES.get((recorded.method, name))
        if spec is None:
            return
        if recorded.body and not recorded.headers.get("content-type", "").startswith("application/json"):
            self._refuse(recorded, f"body sent as {recorded.headers.get('content-type')!r}, not JSON")
        body = json.loads(recorded.body) if recorded.body else {}
        allowed, required = spec
        unknown = sorted(set(body) - set(allowed))
        missing = sorted(required - set(body))
        wrong = sorted(k for k, v in body.items() if k in allowed and not isinstance(v, allowed[k]))
        if unknown or missing or wrong:
            self._refuse(recorded, f"unknown {unknown}, missing {missing}, wrong type {wrong}")
        if name == "statuses" and body.get("state") not in _STATUS_STATES:
            self._refuse(recorded, f"state {body.get('state')!r} is not one of {sorted(_STATUS_STATES)}")
        event = body.get("state_event")
        if event is not None and event not in _STATE_EVENTS.get(name, set()):
            self._refuse(recorded, f"state_event {event!r} is not documented for {name}")

    def _refuse(self, recorded: Recorded, why: str) -> None:
        with self.lock:
            self.problems.append(f"{recorded.method} {recorded.path}: not what GitLab's API documents: {why}")
        raise HttpError(400, f"400 Bad request - {why}")

    def _match(self, path: str) -> tuple[str, dict[str, str]]:
        for name, pattern in _ROUTES:
            found = pattern.match(path)
            if found:
                args = found.groupdict()
                if "project" in args and args["project"] not in (str(self.project_id), quote(self.path, safe="")):
                    raise HttpError(404, "404 Project Not Found")
                return name, args
        with self.lock:
            self.problems.append(f"{path}: not a GitLab API path this stand-in knows")
        raise HttpError(404, "404 Not Found")

    # -- routes ---------------------------------------------------------------------------------------------
    def route(self, method: str, path: str, query: dict[str, str], body: Any) -> Reply:
        name, args = self._match(path)
        handler = getattr(self, f"{method.lower()}_{name}", None)
        if handler is None:
            raise HttpError(405, "405 Method Not Allowed")
        return handler(query, body or {}, args)

    def get_project(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        namespace, _, name = self.path.rpartition("/")
        return Reply(
            200,
            {
                "id": self.project_id,
                "name": name,
                "path": name,
                "path_with_namespace": self.path,
                "namespace": {"id": 7, "full_path": namespace},
                "default_branch": "main",
                "web_url": self.web,
            },
        )

    def get_users(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        name = query.get("username")
        found = [self._user(n) for n in self.users if name in (None, n)]
        return self.page(found, query, "/users", style="gitlab")

    def get_user(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        return Reply(200, self._user(self.login) | {"bot": self.login.endswith("_bot"), "is_admin": False})

    def _user(self, name: str) -> dict[str, Any]:
        return {
            "id": self.users.get(name, 1),
            "username": name,
            "name": name.title(),
            "state": "active",
            "web_url": f"https://gitlab.invalid/{name}",
        }

    def _labels(self, text: str | None) -> list[str]:
        return [part.strip() for part in (text or "").split(",") if part.strip()]

    def _assignees(self, ids: list[int]) -> list[dict[str, Any]]:
        names = {v: k for k, v in self.users.items()}
        unknown = [i for i in ids if i not in names]
        if unknown:
            raise HttpError(400, f"400 Bad request - unknown assignee_ids {unknown}")
        return [self._user(names[i]) for i in ids]

    def get_issues(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        return self._list(self.issues, query, "issues")

    def _list(self, store: dict[int, dict[str, Any]], query: dict[str, str], kind: str) -> Reply:
        wanted = self._labels(query.get("labels"))
        state = query.get("state", "all")
        items = [i for i in store.values() if state == "all" or i["state"] == state]
        items = [i for i in items if all(w in i["labels"] for w in wanted)]
        for key in ("source_branch", "target_branch"):
            if key in query:
                items = [i for i in items if i.get(key) == query[key]]
        order = query.get("order_by", "created_at")
        items.sort(key=lambda i: (i[order], i["iid"]), reverse=query.get("sort", "desc") == "desc")
        return self.page(items, query, f"/projects/{self.project_id}/{kind}", style="gitlab")

    def post_issues(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        iid = max([0, *self.issues]) + 1
        stamp = self._tick()
        issue = {
            "id": self._id(),
            "iid": iid,
            "project_id": self.project_id,
            "title": body["title"],
            "description": body.get("description"),
            "state": "opened",
            "labels": self._labels(body.get("labels")),
            "assignees": self._assignees(body.get("assignee_ids") or []),
            "author": self._user(self.login),
            "created_at": stamp,
            "updated_at": stamp,
            "closed_at": None,
            "web_url": f"{self.web}/-/issues/{iid}",
            "references": {"short": f"#{iid}"},
        }
        self.issues[iid] = issue
        self.notes[("issues", iid)] = []
        return Reply(201, issue)

    def _get(self, store: dict[int, dict[str, Any]], iid: str) -> dict[str, Any]:
        item = store.get(int(iid))
        if item is None:
            raise HttpError(404, "404 Not found")
        return item

    def get_issue(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        return Reply(200, self._get(self.issues, args["iid"]))

    def put_issue(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        return Reply(200, self._update(self._get(self.issues, args["iid"]), body))

    def _update(self, item: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        for key in ("title", "description", "target_branch"):
            if key in body:
                item[key] = body[key]
        if "labels" in body:
            item["labels"] = self._labels(body["labels"])
        if "assignee_ids" in body:
            item["assignees"] = self._assignees(body["assignee_ids"])
        event = body.get("state_event")
        if event == "close" and item["state"] == "opened":
            item["state"], item["closed_at"] = "closed", self._tick()
        elif event == "reopen" and item["state"] == "closed":
            item["state"], item["closed_at"] = "opened", None
        item["updated_at"] = self._tick()
        return item

    def post_statuses(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        sha = args["sha"]
        stamp = datetime.fromtimestamp(self.status_clock(), UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        status = {
            "id": self._id(),
            "sha": sha,
            "ref": body.get("ref") or "main",
            "status": body["state"],
            "name": body.get("name") or body.get("context") or "default",
            "target_url": body.get("target_url"),
            "description": body.get("description"),
            "created_at": stamp,
            "started_at": None,
            "finished_at": stamp,
            "allow_failure": False,
            "coverage": body.get("coverage"),
            "author": self._user(self.login),
        }
        self.statuses.setdefault(sha, []).insert(0, status)
        return Reply(201, status)

    def get_commit_statuses(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        sha = args["sha"]
        return self.page(
            self.statuses.get(sha, []),
            query,
            f"/projects/{self.project_id}/repository/commits/{sha}/statuses",
            style="gitlab",
        )

    def get_notes(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        store = self.issues if args["kind"] == "issues" else self.merge_requests
        self._get(store, args["iid"])
        notes = self.notes[(args["kind"], int(args["iid"]))]
        ordered = notes if query.get("sort", "desc") == "asc" else list(reversed(notes))
        return self.page(
            ordered, query, f"/projects/{self.project_id}/{args['kind']}/{args['iid']}/notes", style="gitlab"
        )

    def post_notes(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        store = self.issues if args["kind"] == "issues" else self.merge_requests
        item = self._get(store, args["iid"])
        stamp = self._tick()
        note = {
            "id": self._id(),
            "body": body["body"],
            "author": self._user(self.login),
            "created_at": stamp,
            "updated_at": stamp,
            "system": False,
            "noteable_id": item["id"],
            "noteable_type": "Issue" if args["kind"] == "issues" else "MergeRequest",
            "noteable_iid": item["iid"],
        }
        self.notes[(args["kind"], item["iid"])].append(note)
        item["updated_at"] = stamp
        return Reply(201, note)

    def get_merge_requests(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        return self._list(self.merge_requests, query, "merge_requests")

    def post_merge_requests(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        if any(
            m["state"] == "opened"
            and m["source_branch"] == body["source_branch"]
            and m["target_branch"] == body["target_branch"]
            for m in self.merge_requests.values()
        ):
            raise HttpError(409, "Another open merge request already exists for this source branch")
        iid = max([0, *self.merge_requests]) + 1
        stamp = self._tick()
        mr = {
            "id": self._id(),
            "iid": iid,
            "project_id": self.project_id,
            "title": body["title"],
            "description": body.get("description"),
            "state": "opened",
            "labels": self._labels(body.get("labels")),
            "assignees": self._assignees(body.get("assignee_ids") or []),
            "source_branch": body["source_branch"],
            "target_branch": body["target_branch"],
            "author": self._user(self.login),
            "created_at": stamp,
            "updated_at": stamp,
            "closed_at": None,
            "merged_at": None,
            "web_url": f"{self.web}/-/merge_requests/{iid}",
            "references": {"short": f"!{iid}"},
        }
        self.merge_requests[iid] = mr
        self.notes[("merge_requests", iid)] = []
        return Reply(201, mr)

    def get_merge_request(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        return Reply(200, self._get(self.merge_requests, args["iid"]))

    def put_merge_request(self, query: dict[str, str], body: dict[str, Any], args: dict[str, str]) -> Reply:
        return Reply(200, self._update(self._get(self.merge_requests, args["iid"]), body))
