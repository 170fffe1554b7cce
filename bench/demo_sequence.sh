#!/bin/bash
# `pymc-accel demo` run N times in a row, each in a new process, on what a new machine holds:
# an empty pymc-accel cache (no calibration, no run history, no stored profiles) and an empty
# PyTensor compile directory (no numba kernels). It shows how the choice evolves as the run
# history fills, and what each run took.
#
#   bench/demo_sequence.sh OUT_DIR [RUNS] [CHECKOUT]
#
# OUT_DIR gets demo-<i>.log per run and times.txt (one line a run: wall seconds of the
# command). CHECKOUT (default: this one) is put first on the import path, so another commit's
# code (a `git worktree`) runs on the same virtual environment for a side-by-side comparison.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
runs="${2:-4}"
checkout="$(cd "${3:-$here}" && pwd)"
scratch="$(mktemp -d)"
export PYMC_ACCEL_CACHE_DIR="$scratch/cache" PYTENSOR_FLAGS="base_compiledir=$scratch/pytensor"
export JAX_PLATFORMS="${JAX_PLATFORMS:-cpu}" PYTHONPATH="$checkout"
: > "$out/times.txt"
cd "$checkout"  # so the checkout's package, not the current directory's, is imported
for i in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  "$here/.venv/bin/python" -c "
import sys, pymc_accel
assert pymc_accel.__file__.startswith('$checkout'), pymc_accel.__file__
from pymc_accel.cli import main
sys.argv = ['pymc-accel', 'demo', '--no-progress']
main()" > "$out/demo-$i.log" 2>&1 || echo "run $i failed: see $out/demo-$i.log" >&2
  end=$(date +%s.%N)
  echo "run $i: $(python3 -c "print(round($end - $start, 1))") s; $(grep -h 'sampled with' "$out/demo-$i.log" || true)" >> "$out/times.txt"
done
rm -rf "$scratch"
cat "$out/times.txt"
