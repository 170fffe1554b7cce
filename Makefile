# The README's two commands: `make demo` and `make test`. Each creates the virtual environment
# (with a Python >= 3.12 found by scripts/find-python.sh) if it is missing, installs, then runs.
VENV      ?= .venv
PY        := $(VENV)/bin/python
STAMP     := $(VENV)/.installed
# JAX on CPU only in tests and CI; XLA_FLAGS gives the CPU several devices so parallel chains run.
TEST_ENV  := JAX_PLATFORMS=cpu

.PHONY: demo test test-slow bench clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml plugins/pymc-accel-blackjax/pyproject.toml \
          plugins/pymc-accel-nutpie-jax/pyproject.toml scripts/find-python.sh
	@test -x $(PY) || { P=$$(scripts/find-python.sh) && echo "Creating $(VENV) with $$P" && $$P -m venv $(VENV); }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]" -e plugins/pymc-accel-blackjax \
		-e plugins/pymc-accel-nutpie-jax
	@touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/pymc-accel demo

test: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -n 2 --dist loadfile -m "not slow and not gpu" tests

test-slow: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -m "slow" tests

bench: $(STAMP)
	$(PY) bench/bench_pipeline.py --out docs/benchmarks-pipeline.json

clean:
	rm -rf $(VENV) build *.egg-info
