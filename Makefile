# Every target creates .venv itself, so a fresh clone needs nothing but Python 3.11+.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
# Caches kept outside the clone, as the kits' builds are (kits/check.py): a fresh clone
# of the same code checks in a second what it would take 15 s to check again.
CACHE := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mexican-train-referee
export MYPY_CACHE_DIR ?= $(CACHE)/mypy
# Python writes its bytecode, as it does by default: an environment that turns that
# off (PYTHONDONTWRITEBYTECODE) would make every test process and every bot and
# command it starts compile its modules again, and pytest rewrite every test file
# again in each worker (about 7 s of CPU a process).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test check bench lint typecheck system-deps clean examples kits

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The checkout is installed as a path (setuptools' "compat" editable mode: a .pth file
# naming this folder) rather than through an import hook: every Python process of the
# venv (each bot, each referee command) starts without importing the hook's modules:
# 9 ms of CPU for `python -c pass` instead of 21, 49 ms for a sample bot instead of 55
# (medians of 30 starts, twice; tests/README.md). setuptools calls that mode
# transitional (it says so during the install); where it is gone, the usual editable
# install is made instead.
EDITABLE := --config-settings editable_mode=compat

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(EDITABLE) -e . || \
	  $(BIN)/python -m pip install --quiet -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(EDITABLE) -e '.[test,cluster,learn]' || \
	  $(BIN)/python -m pip install --quiet -e '.[test,cluster,learn]'
	touch $@ $(STAMP)

# The demo league runs the sample bots; `python` in their commands is the venv's.
# It builds the league's results site (standings, bot pages, every game's replay)
# and says what to try next.
DEMO_GAME := league-out/logs/g00001.jsonl.gz
demo: $(STAMP)
	rm -rf league-out
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/referee league examples/league.toml --out league-out --site --jobs 2
	@echo
	@echo "Try next:"
	@echo "  file://$(CURDIR)/league-out/site/index.html"
	@echo "      the results site: standings, a page per bot, every game's replay in a browser"
	@echo "  $(BIN)/referee replay $(DEMO_GAME) --show | less"
	@echo "      game 1 as text, move by move (the log is checked first)"
	@echo "  $(BIN)/referee standings league-out"
	@echo "      the standings again; all of them in league-out/standings.md"
	@echo "  . $(BIN)/activate"
	@echo "      then referee --help: play a game, check a bot, run your own league"

lint: $(TEST_STAMP)
	$(BIN)/ruff check referee protocol tests bench sample_bots spec kits/check.py kits/python
	$(BIN)/ruff format --check referee protocol tests bench sample_bots spec kits/check.py kits/python

typecheck: $(TEST_STAMP)
	$(BIN)/mypy --strict
	$(BIN)/mypy --strict spec/examples.py spec/wiretap.py spec/example_bot.py spec/event_example.py

# The examples in spec/PROTOCOL.md and spec/LOGS.md, played again and rewritten in
# place; tests/test_spec_examples.py fails when they are not what the referee sends.
# Likewise the starter kits' fixtures (kits/*/fixtures/), checked by tests/test_kits.py,
# and spec/EVENTS.md's worked example, checked by tests/event/test_event.py.
examples: $(STAMP)
	$(BIN)/python spec/examples.py
	$(BIN)/python spec/kit_fixtures.py
	$(BIN)/python spec/event_example.py

# Builds and tests every starter kit and runs `referee check-bot` on its bot; a kit
# whose toolchain is missing is named NOT CHECKED (exit 3), never passed.
kits: $(TEST_STAMP) system-deps
	$(BIN)/python kits/check.py

# The replay page is tested in a real headless browser (Debian's chromium) and the
# sandbox with bubblewrap; the starter kits (kits/check.py) need Go, TypeScript, a JDK
# with JUnit 5, CMake and g++, and Cargo with Debian's serde crates (offline builds).
# Each is installed here when missing (as root, or with sudo).
system-deps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v minisign >/dev/null 2>&1 || missing="$$missing minisign"; \
	command -v go >/dev/null 2>&1 || missing="$$missing golang-go"; \
	command -v tsc >/dev/null 2>&1 || missing="$$missing node-typescript"; \
	command -v javac >/dev/null 2>&1 || missing="$$missing openjdk-17-jdk-headless"; \
	[ -e /usr/share/java/junit-platform-console-standalone.jar ] || missing="$$missing junit5"; \
	command -v cmake >/dev/null 2>&1 || missing="$$missing cmake"; \
	command -v g++ >/dev/null 2>&1 || missing="$$missing g++"; \
	ls -d /usr/share/cargo/registry/serde_json-* >/dev/null 2>&1 || missing="$$missing librust-serde-json-dev"; \
	ls -d /usr/share/cargo/registry/serde_derive-* >/dev/null 2>&1 || missing="$$missing librust-serde-derive-dev"; \
	command -v cargo >/dev/null 2>&1 || missing="$$missing cargo"; \
	if [ -n "$$missing" ]; then \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

# Six test processes on two cores (most tests wait on bot processes and clocks part of
# the time, and on a busy machine each process gets its share of the cores: with four
# busy loops, six workers took 623 s where four took 645 s in the same hour, and quiet
# 359 s against 361 s; tests/README.md), the
# longest tests first and the rest shared as workers free up (worksteal); Hypothesis's
# `ci` profile draws the same examples on every run. Targets and measurements:
# tests/README.md. Tests marked `alone` measure the referee's timing under its own
# load (64 games with 100 ms moves, a referee stopped 300 ms a second): they run
# afterwards, by themselves.
TEST_WORKERS ?= 6
# A clone without bytecode is collected once first (pytest's rewritten test files and
# the modules they import are written then), so the workers that start together do not
# each compile the same files: six collections from nothing took 39 CPU-s, one then
# six 7 + 15 (tests/README.md). A failed collection is left to the run to report.
PRECOLLECT = test -d tests/__pycache__ || $(BIN)/python -m pytest --collect-only -qq -p no:cacheprovider >/dev/null 2>&1 || true

test: lint typecheck system-deps
	@$(PRECOLLECT)
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal -rfEs -m "not alone"
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -rfEs -m alone

# The everyday loop, under a minute on a quiet 2-core machine: ruff, mypy (its cache
# makes a second run quick), and the tests marked `everyday` (tests/conftest.py: the
# engine, protocol, statistics, the bots' reasoning, the league's and arena's logic;
# no league, server, browser, kit or sandbox is started). `make test` runs everything.
check: lint typecheck
	@$(PRECOLLECT)
	HYPOTHESIS_PROFILE=check $(BIN)/python -m pytest -n 3 --dist worksteal -rfEs -m everyday

bench: $(TEST_STAMP)  # bench_cluster.py needs the cluster extra
	$(BIN)/python bench/bench_engine.py
	$(BIN)/python bench/bench_match.py
	$(BIN)/python bench/bench_standings.py
	$(BIN)/python bench/bench_lag.py
	$(BIN)/python bench/bench_league.py
	$(BIN)/python bench/bench_sandbox.py
	$(BIN)/python bench/bench_cluster.py
	$(BIN)/python bench/bench_live.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis league-out
