#!/usr/bin/env bash
# Download, here, the wheels the GPU machine lacks (it has JAX, NumPyro, NumPy, SciPy, pandas,
# pyarrow, numba and rich, but not PyMC, PyTensor, ArviZ 1.x or nutpie) into .whl/, for
# bench/gpu_session.sh. nutpie travels so that the regret bench there runs every CPU candidate
# the selector weighs against the GPU, with its own needs (arro3-core, obstore, zarr and zarr's).
# Versions are those of this project's .venv, so both machines run the same PyMC.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx "/.whl/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo /.whl/ >> .git/info/exclude; }
pins=$(.venv/bin/python -m pip list --format=freeze 2>/dev/null | grep -i -E \
  '^(pymc|pytensor|arviz|arviz-base|arviz-stats|arviz-plots|xarray|xarray-einstats|cachetools|better[-_]optimize|'\
'nutpie|arro3-core|obstore|platformdirs|zarr|numcodecs|donfig|google[-_]crc32c|msgspec)==')
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  -d .whl $pins
