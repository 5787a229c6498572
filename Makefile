# Quick start: `make demo` and `make test` on a fresh machine; both create .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE := repo-templates/demo
DEMO_OUT := .cache/demo-out

.PHONY: demo test lint policy-test bench clean install

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# The demo's findings are the point: exit 2 (findings) is expected and not an error for make.
demo: $(STAMP)
	@rm -rf .cache/demo-repo
	@$(BIN)/python repo-templates/demo/build.py repo .cache/demo-repo
	@echo "== kai-gitops diff (add-on cluster, demo snapshot)"
	@$(BIN)/kai-gitops diff --repo .cache/demo-repo --cluster prod-addon --snapshot $(EXAMPLE)/snapshots/prod-addon.yaml; \
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

test: $(STAMP)
	$(BIN)/ruff check reconciler tests bench repo-templates
	$(BIN)/kai-gitops policy test
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check reconciler tests bench repo-templates

clean:
	rm -rf $(VENV) .cache build *.egg-info
