# The two commands: `make run` and `make test`. Everything else they need, they install.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-$(shell cat requirements.txt | cksum | cut -d' ' -f1)

.PHONY: vendor run cluster cluster-stop test test-cluster fuzz bench bench-serving bench-smoke bench-reading bench-fanout bench-hybrid bench-hotkeys bench-live bench-search bench-cluster bench-deps bench-fanout-limit soak venv clean-var

$(STAMP): requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11+"; exit 1; }
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet --progress-bar on -r requirements.txt
	@rm -f $(VENV)/.installed-*
	@touch $@

venv: $(STAMP)

# Front-end files from npm (pinned, integrity-checked) into static/vendor/: axe-core, which the
# browser tests run over every page (scripts/vendor.sh lists them).
vendor:
	@scripts/vendor.sh

run: $(STAMP)
	@scripts/run.sh

# A local 3-primary Redis Cluster for `REDIS_CLUSTER=1 REDIS_URL=redis://127.0.0.1:7001/0 make run`.
cluster:
	@scripts/cluster.sh start

cluster-stop:
	@scripts/cluster.sh stop

# The whole suite on a plain Redis, then again with the data Redis on a throwaway 3-primary
# Redis Cluster (every test but the browser ones, and one browser path: marker "cluster").
test: $(STAMP) vendor
	@scripts/with-servers.sh pytest $(ARGS)
	@$(MAKE) --no-print-directory test-cluster

test-cluster: $(STAMP)
	@UGC_CLUSTER=1 scripts/with-servers.sh pytest -m "not browser or cluster" $(ARGS)

# The API fuzzed at length: every operation of the OpenAPI document, FUZZ_EXAMPLES generated
# cases each (default 1,000; make test runs the same test with 10), FUZZ_SEED fixed (13), against
# a live server on a throwaway PostgreSQL and plain Redis. About ten minutes on 2 cores; prints
# each operation as it passes or fails, then the cases and answers per operation.
fuzz: $(STAMP)
	@FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-1000} scripts/with-servers.sh pytest ugcsite/tests/test_fuzz.py \
		-m "not browser" -v -p no:cacheprovider $(ARGS)

bench-deps: $(STAMP)
	@$(VENV)/bin/pip install --quiet -r requirements-bench.txt

# The whole benchmark at 10k, 100k and 1M boards (about half an hour); figures in bench/results/.
bench: bench-deps
	@scripts/with-servers.sh python -m bench.run

# The same code on a tiny world, in about a minute: CI runs it so the benchmark never rots.
bench-smoke: bench-deps
	@scripts/with-servers.sh python -m bench.run --smoke

# Social reading alone (both storage models), on 20,000 users: about 15 minutes.
bench-reading: bench-deps
	@scripts/with-servers.sh python -m bench.run --reading

# Fan-out and social reading on a plain Redis, then on a 3-primary cluster: the ratios.
bench-cluster: $(STAMP)
	@scripts/with-servers.sh python -m bench.cluster
	@UGC_CLUSTER=1 scripts/with-servers.sh python -m bench.cluster
	@$(VENV)/bin/python -m bench.cluster --compare

# Search alone at 1,000,000 boards and 20,000 people (about ten minutes): bench/results/search.md.
bench-search: bench-deps
	@scripts/with-servers.sh python -m bench.search $(ARGS)

# The serving stacks scripts/serve.sh can start (nginx + gunicorn or granian + uvicorn, uvicorn or
# granian alone; Django's pool or PgBouncer), each under wrk in one run (bench/results/serving.md).
bench-serving: bench-deps
	@scripts/with-servers.sh python -m bench.serving $(ARGS)

# What the keys every request may touch cost one Redis node, and its ceiling (a minute).
bench-hotkeys: $(STAMP)
	@scripts/with-servers.sh python -m bench.hotkeys

# Shared boards, live: K boards x N WebSocket clients against uvicorn with 1, 2 and 4 worker
# processes (ops/s, broadcast latency, memory a connection): bench/results/live.md.
bench-live: $(STAMP)
	@scripts/with-servers.sh python -m bench.live $(ARGS)

# One post to FOLLOWERS followers (default 100,000) end to end through a real Celery worker.
bench-fanout: $(STAMP)
	@scripts/with-servers.sh python -m bench.fanout $(ARGS)

# Fan-out against redis-benchmark -c 1 -P 16 ZADD for 10^4, 10^5 and 10^6 followers, batch sizes
# and script chunks side by side (bench/results/fanout-limit.md; about ten minutes).
bench-fanout-limit: $(STAMP)
	@scripts/with-servers.sh python -m bench.fanout_limit $(ARGS)

# Hybrid fan-out: a post by an author with 1,000,000 followers, and the feed of a reader of 20 such
# authors and 200 ordinary ones (bench/results/hybrid.md).
bench-hybrid: bench-deps
	@scripts/with-servers.sh python -m bench.hybrid $(ARGS)

# The shipped stack (scripts/serve.sh, as make run) under a mixed load for SOAK_SECONDS: locust on
# the API and the pages signed in and out, WebSocket clients drawing on shared boards and listening
# on /ws/me; PostgreSQL connections, each process's RSS and open files, Redis memory and the queue
# sampled every 10 s and drawn (bench/results/soak.png); then every delivery checked and growth judged.
SOAK_SECONDS ?= 300
soak: bench-deps
	@SOAK_SECONDS=$(SOAK_SECONDS) scripts/with-servers.sh python -m bench.soak

clean-var:
	rm -rf var
