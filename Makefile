# The two set-up commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO := examples/loss_scaling.py:main

.PHONY: install demo test test-pythons bench clean

install: $(VENV)/.installed

# torch is pinned to the CPU build that this machine's package index serves;
# asking pip for plain "torch" would fetch a multi-GB CUDA build instead.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

# Finds the bundled example's bug (exit 1 means "a bug was found"), then replays it.
demo: install
	rm -rf .dnsse/demo
	$(BIN)/dnsse check $(DEMO) --out .dnsse/demo; test $$? -eq 1
	$(BIN)/dnsse replay .dnsse/demo/bug-1.json; test $$? -eq 1

# The suite runs on one worker process per core, at most 4; the tests that start real Ray or gloo
# share one worker and run one after another (tests/conftest.py says why).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)

test: install
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

# The torch-free tests on the other supported Pythons (3.12, 3.13), each in a venv of its own
# without torch (no CPU build of it is served for them here): threads and their shared-state
# points, coverage, asyncio, the Ray model, LTL, replay, minimization, the CLI. A Python not
# found (under pyenv, or on PATH as pythonX.Y) is skipped with a message.
OTHER_PYTHONS ?= 3.12 3.13
PYENV_VERSIONS ?= $(or $(PYENV_ROOT),$(HOME)/.pyenv)/versions
PYTHONS_TESTS := tests/test_tracer_backends.py tests/test_threads_shared_state.py tests/test_threads_bugs.py \
	tests/test_threads_primitives.py tests/test_threads_executor.py tests/test_coverage.py tests/test_asyncio.py \
	tests/test_ray_semantics.py tests/test_ray_bugs.py \
	tests/test_agents_share_a_thread.py::test_other_pythons_keep_an_os_thread_per_agent \
	tests/test_agents_share_a_thread.py::test_per_thread_state_stays_per_thread \
	tests/test_spec_parser.py tests/test_spec_monitor.py tests/test_minimize.py \
	tests/test_random_chooser.py tests/test_chooser_fast_paths.py tests/test_agent_registration.py \
	tests/test_dfs_inputs.py tests/test_process_exit.py tests/test_thread_frames.py tests/test_own_builtins.py \
	tests/test_advisor_offline.py \
	tests/test_cli.py::test_a_torch_program_without_torch_installed_is_bad_input \
	tests/test_cli.py::test_lock_order_deadlock_names_both_threads \
	tests/test_cli.py::test_the_same_seed_gives_the_same_campaign \
	tests/test_cli.py::test_replay_of_a_fixed_program_passes_with_exit_zero

test-pythons:
	@status=0; for version in $(OTHER_PYTHONS); do \
		python=$$(ls -d $(PYENV_VERSIONS)/$$version.*/bin/python 2>/dev/null | tail -1); \
		[ -n "$$python" ] || python=$$(command -v python$$version); \
		if [ -z "$$python" ] || ! $$python -c '' 2>/dev/null; then echo "test-pythons: no Python $$version here; its tests are skipped"; continue; fi; \
		venv=.venv$$(echo $$version | tr -d .); \
		if [ ! -f $$venv/.installed ] || [ pyproject.toml -nt $$venv/.installed ]; then \
			$$python -m venv $$venv && $$venv/bin/pip install --quiet --disable-pip-version-check -e '.[test]' \
				&& touch $$venv/.installed || { status=1; continue; }; \
		fi; \
		echo "test-pythons: Python $$version ($$python)"; \
		$$venv/bin/python -m pytest -q -m "not torch and not gloo and not ray" $(PYTHONS_TESTS) || status=1; \
	done; exit $$status

bench: install
	$(BIN)/python benchmarks/engine_speed.py

clean:
	rm -rf $(VENV) .venv3*/ .dnsse .pytest_cache
