# The two commands of the README. Both create .venv and install what they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench clean screenshot base-image harbor-venv

$(STAMP): pyproject.toml setup.py src/trialbook/ledger/formats/_cjsonl.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=25.1"
	@# the optional extras too: their tests (the inspect importer, the report's plots, the Ray
	@# executor, the model gateway) run, never skipped, wherever make test runs
	$(PY) -m pip install --quiet -e ".[inspect,plots,ray,gateway]" --group dev
	touch $(STAMP)

demo: $(STAMP)
	rm -rf demo-output
	$(VENV)/bin/trialbook demo --out demo-output

# the README's picture of the report: the demo's report.html in headless Chromium, by the browser
# test's own code (tests/report/browser.py), which also checks it fetched nothing and logged no error
screenshot: demo
	$(PY) -m tests.report.browser demo-output/report.html docs/report-screenshot.png

test: lint typecheck unit

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks setup.py
	$(VENV)/bin/ruff format --check src tests benchmarks setup.py
	@# the C reader compiles without a single warning (skipped, and said, where no compiler is)
	@if command -v $(CC) >/dev/null 2>&1; then \
		$(CC) -fsyntax-only -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Werror \
			-I"$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
			src/trialbook/ledger/formats/_cjsonl.c && echo "C reader: no warnings"; \
	else echo "C reader: no C compiler here, not checked"; fi

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/bench_score_parse.py
	$(PY) benchmarks/bench_score_parse.py --csv
	$(PY) benchmarks/bench_score_bootstrap.py
	$(PY) benchmarks/bench_budget.py
	$(PY) benchmarks/bench_cli_startup.py
	$(PY) benchmarks/bench_harness_overhead.py
	$(PY) benchmarks/bench_report.py
	$(PY) benchmarks/bench_race.py
	$(PY) benchmarks/bench_gateway.py

clean:
	rm -rf $(VENV) $(HARBOR_VENV) demo-output .pytest_cache .mypy_cache .ruff_cache

# The container tier's base image (localhost/trialbook-base:bookworm), which a task's Dockerfile can
# start FROM: Debian bookworm's minimal system by debootstrap (from its default mirror), imported
# into podman. Needs root, podman and debootstrap; does nothing when the image exists. Beside it, the
# same system with Python 3 (localhost/trialbook-python:bookworm), where the tests run real model
# clients (the openai and anthropic packages) as agents in the container tier.
BASE_IMAGE := localhost/trialbook-base:bookworm
PYTHON_IMAGE := localhost/trialbook-python:bookworm
base-image:
	@if podman image exists $(BASE_IMAGE) 2>/dev/null; then echo "$(BASE_IMAGE): present"; else \
		rootfs=$$(mktemp -d /var/tmp/trialbook-rootfs.XXXXXX) && \
		debootstrap --variant=minbase bookworm "$$rootfs" >/dev/null && \
		tar -C "$$rootfs" -c . | podman import - $(BASE_IMAGE) >/dev/null && \
		rm -rf "$$rootfs" && echo "$(BASE_IMAGE): built"; fi
	@if podman image exists $(PYTHON_IMAGE) 2>/dev/null; then echo "$(PYTHON_IMAGE): present"; else \
		rootfs=$$(mktemp -d /var/tmp/trialbook-rootfs.XXXXXX) && \
		debootstrap --variant=minbase --include=python3 bookworm "$$rootfs" >/dev/null && \
		tar -C "$$rootfs" -c . | podman import - $(PYTHON_IMAGE) >/dev/null && \
		rm -rf "$$rootfs" && echo "$(PYTHON_IMAGE): built"; fi

# Harbor 0.25.0 itself, in its own venv (it needs Python 3.12): tests/harbor/test_harbor_parity.py
# runs the same Harbor dataset through it and through trialbook and compares the verdicts. The
# Python is python3.12 on PATH where it runs (a pyenv shim may not), else pyenv's 3.12.
HARBOR_VENV := .venv-harbor
HARBOR_STAMP := $(HARBOR_VENV)/.installed
harbor-venv: $(HARBOR_STAMP)
$(HARBOR_STAMP):
	@py=""; \
	if python3.12 --version >/dev/null 2>&1; then py=$$(command -v python3.12); else \
		for c in /root/.pyenv/versions/3.12.*/bin/python3.12; do [ -x "$$c" ] && py=$$c; done; fi; \
	if [ -z "$$py" ]; then echo "harbor-venv: no Python 3.12 (python3.12 on PATH, or pyenv's)" >&2; exit 1; fi; \
	rm -rf $(HARBOR_VENV) && "$$py" -m venv $(HARBOR_VENV) && \
	$(HARBOR_VENV)/bin/python -m pip install --quiet "harbor==0.25.0" && touch $(HARBOR_STAMP)
