# The two commands: `make run` and `make test`. Everything else they need, they install.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-$(shell cat requirements.txt | cksum | cut -d' ' -f1)

.PHONY: run test bench-fanout venv clean-var

$(STAMP): requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11+"; exit 1; }
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet --progress-bar on -r requirements.txt
	@rm -f $(VENV)/.installed-*
	@touch $@

venv: $(STAMP)

run: $(STAMP)
	@scripts/run.sh

test: $(STAMP)
	@scripts/with-servers.sh pytest $(ARGS)

# One post to FOLLOWERS followers (default 100,000) end to end through a real Celery worker.
bench-fanout: $(STAMP)
	@scripts/with-servers.sh python -m bench.fanout $(ARGS)

clean-var:
	rm -rf var
