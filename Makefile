# Quick start: `make demo` and `make test` on a fresh machine; both create .venv themselves.
PYTHON ?= python3
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE := repo-templates/demo
DEMO_OUT := .cache/demo-out

.PHONY: demo demo-charts demo-fix test check unit ratchet tables lint format typecheck contracts docs policy-test bench clean install tools

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --upgrade pip > /dev/null 2>&1 || $(BIN)/pip install --quiet --upgrade pip

# pip's own output (and setuptools' editable-install banner, a warning on stderr) goes to a log, shown only
# when the install fails: the first thing `make demo` prints is the demo.
# The native YAML reader is compiled by the install: a change to its C source installs again.
$(STAMP): $(BIN)/python pyproject.toml reconciler/yamlio/_native_reader.c
	@echo "installing kai-gitops and its dependencies into $(VENV) (log: $(VENV)/pip-install.log)"
	@$(BIN)/pip install --quiet -e '.[test,docs]' > $(VENV)/pip-install.log 2>&1 || { cat $(VENV)/pip-install.log >&2; exit 1; }
	@touch $(STAMP)

install: $(STAMP)

# The demo's findings are the point: exit 2 (findings) is expected and not an error for make.
# Its log lines read as text even when `make demo` runs in a pod (where --log-format auto picks JSON lines).
demo demo-charts demo-fix: export KAI_GITOPS_LOG_FORMAT = text
demo: $(STAMP)
	@rm -rf .cache/demo-repo
	@$(BIN)/python repo-templates/demo/build.py repo .cache/demo-repo
	@echo "== kai-gitops diff (add-on cluster, demo snapshot; who changed what from its managedFields and audit log)"
	@$(BIN)/kai-gitops diff --repo .cache/demo-repo --cluster prod-addon --snapshot $(EXAMPLE)/snapshots/prod-addon.yaml \
	  --k8s-audit-log $(EXAMPLE)/audit.log; \
	  rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc
	@echo
	@echo "== kai-gitops doctor (same snapshot, no Git needed)"
	@$(BIN)/kai-gitops doctor --snapshot $(EXAMPLE)/snapshots/prod-addon.yaml; \
	  rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc
	@echo
	@echo "== kai-gitops check (the PR check on the demo's last commit, rules from its parent)"
	@$(BIN)/kai-gitops check --repo .cache/demo-repo --base HEAD~1; \
	  rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc
	@echo
	@echo "== kai-gitops check for reviewers: SARIF, GitLab Code Quality and the PR comment (Markdown)"
	@$(BIN)/kai-gitops check --repo .cache/demo-repo --base HEAD~1 -o sarif=$(DEMO_OUT)/check.sarif \
	  -o gitlab=$(DEMO_OUT)/gl-code-quality-report.json -o markdown=$(DEMO_OUT)/pr-comment.md; \
	  rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc
	@for f in check.sarif gl-code-quality-report.json pr-comment.md; do echo "wrote $(DEMO_OUT)/$$f"; done
	@echo
	@echo "== kai-gitops check --fix-git-dry-run (the fix pull request it would open: only these lines change)"
	@$(BIN)/kai-gitops check --repo .cache/demo-repo --base HEAD~1 --fix-git-dry-run > /dev/null; \
	  rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc
	@echo
	@to="$$($(BIN)/python -c 'from reconciler.checks.upgrade_plan import target_versions; print(target_versions()[-1])')"; \
	  echo "== kai-gitops upgrade-plan (lab-standalone from its pin to $$to, the newest modelled KAI release)"; \
	  $(BIN)/kai-gitops upgrade-plan --repo .cache/demo-repo --cluster lab-standalone --to "$$to"; \
	  rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc
	@echo
	@$(MAKE) --no-print-directory demo-charts
	@echo
	@$(MAKE) --no-print-directory demo-fix

# The function charts render with the real `helm template`: the one built by `make tools`, else one on PATH.
# On a fresh machine neither exists yet, and the section says so in one line instead of failing the demo.
demo-charts: $(STAMP)
	@echo "== kai-gitops check on function charts (repo-templates/function-charts: one broken chart per mistake)"
	@rm -rf .cache/demo-charts; $(BIN)/python repo-templates/demo/build.py charts .cache/demo-charts
	@helm="$$($(PYTHON) tools/build.py --print 2>/dev/null)/helm"; [ -x "$$helm" ] || helm="$$(command -v helm)"; \
	  if [ -z "$$helm" ]; then \
	    echo "   skipped: no helm here yet (the charts render with the real \`helm template\`; \`make tools\` builds it with Go, \`make test\` too)"; \
	  else \
	    $(BIN)/kai-gitops check --repo .cache/demo-charts --helm "$$helm" | sed -n '/^  [A-Z]* *NVCF-F-/{p;n;p}'; \
	    rc=$${PIPESTATUS[0]}; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc; \
	  fi

# The fix loop on the same snapshot, served by the test API server: plan, apply, diff again.
DEMO_KUBECONFIG := .cache/demo-kubeconfig
demo-fix: $(STAMP)
	@rm -f $(DEMO_KUBECONFIG) .cache/demo-audit.jsonl; mkdir -p .cache
	@$(BIN)/python -m tests.support.kubeserver --snapshot $(EXAMPLE)/snapshots/prod-addon.yaml \
	    --kubeconfig-out $(DEMO_KUBECONFIG) > .cache/demo-server.log 2>&1 & server=$$!; \
	  trap 'kill $$server 2>/dev/null; wait $$server 2>/dev/null' EXIT; \
	  for i in $$(seq 100); do [ -s $(DEMO_KUBECONFIG) ] && break; sleep 0.1; done; \
	  k="--repo .cache/demo-repo --cluster prod-addon --kubeconfig $(DEMO_KUBECONFIG)"; \
	  echo "== kai-gitops reconcile (the plan; the demo snapshot served by the test API server; whose change it undoes)"; \
	  $(BIN)/kai-gitops reconcile $$k --k8s-audit-log $(EXAMPLE)/audit.log; rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc; \
	  echo; echo "== kai-gitops reconcile --apply (dry-run, then the writes, under a Lease)"; \
	  $(BIN)/kai-gitops reconcile $$k --apply --audit-log .cache/demo-audit.jsonl | sed -n '/^  [✓✗=-] /,$$p'; \
	  rc=$${PIPESTATUS[0]}; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc; \
	  echo "   audit: $$(wc -l < .cache/demo-audit.jsonl) line(s) in .cache/demo-audit.jsonl, naming whose fields each write took over:" \
	    "$$($(BIN)/python -c 'import json, sys; print(", ".join(sorted({m for l in sys.stdin for m in json.loads(l).get("previousManagers") or ()})))' < .cache/demo-audit.jsonl)"; \
	  echo; echo "== kai-gitops diff again (drift gone; the Helm and gate findings are the operator's)"; \
	  $(BIN)/kai-gitops diff $$k | sed -n '/^NVCA prediction/,$$p'; \
	  rc=$${PIPESTATUS[0]}; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || exit $$rc

# The real tools (kube-apiserver, etcd, kubectl, helm, opa, actionlint, promtool) built from tools/*/go.mod
# into a cache outside the clone (see tools/build.py); prints their bin folder last. Without Go it prints
# one line saying the real-cluster tier (tests/real/) is skipped; with CI=true a missing Go fails instead.
tools:
	@$(PYTHON) tools/build.py

test: tools $(STAMP)
	$(MAKE) --no-print-directory check
	$(MAKE) --no-print-directory docs
	$(BIN)/kai-gitops policy test
	$(BIN)/python -m pytest

# Seconds, no cluster, no tools: lint, types, the import contracts and the ratchets. What the pre-commit
# hooks run (.pre-commit-config.yaml), on the whole tree.
check: $(STAMP)
	$(BIN)/ruff check reconciler tests bench repo-templates tools
	$(BIN)/ruff format --check reconciler tests bench repo-templates tools
	$(MAKE) --no-print-directory typecheck contracts ratchet

# Every test but the real-cluster tier (tests/real/), which needs the real tools (`make tools`).
unit: $(STAMP)
	$(BIN)/python -m pytest --ignore=tests/real

# Bare `Any` in signatures and function-level imports under reconciler/ may only go down (tools/ratchet.py,
# maxima in tools/ratchet.json); `$(BIN)/python tools/ratchet.py --update` lowers the maxima after a clean-up.
ratchet:
	$(PYTHON) tools/ratchet.py

# The rule and format tables in policies/README.md, docs/policies.md and docs/outputs.md, from the code
# (tests/project/test_docs_tables.py fails while one is stale).
tables: $(STAMP)
	$(BIN)/python tools/docs_tables.py

# The documentation site (docs/, mkdocs.yml), built offline; --strict turns every warning (a broken link,
# a page missing from the nav) into a failure. COLUMNS fixes the width of the generated help text.
# The site is a build product: .cache/ is git-ignored.
DOCS_SITE := .cache/site
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 COLUMNS=100 $(BIN)/mkdocs build --strict --site-dir $(DOCS_SITE)

lint: $(STAMP)
	$(BIN)/ruff check reconciler tests bench repo-templates tools
	$(BIN)/ruff format --check reconciler tests bench repo-templates tools

# Rewrites the tree as `make check` wants it (ruff format, then ruff's fixable lints).
format: $(STAMP)
	$(BIN)/ruff format reconciler tests bench repo-templates tools
	$(BIN)/ruff check --fix reconciler tests bench repo-templates tools

# mypy, strict on reconciler/ ([tool.mypy] in pyproject.toml).
typecheck: $(STAMP)
	$(BIN)/mypy

# The import contracts ([tool.importlinter] in pyproject.toml): the rooms' order, who imports kubernetes,
# and the rooms that import no client.
contracts: $(STAMP)
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .cache build *.egg-info
