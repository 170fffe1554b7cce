#!/usr/bin/env bash
# Everything pymc-accel measures on a lent GPU machine, in one call.
#
# The GPU machine has JAX and NumPyro but not PyMC or PyTensor; they travel as wheels in .whl/
# (downloaded here with `bench/gpu_wheels.sh`). This script installs them, checks that JAX sees
# the GPU and PyMC imports, then runs the named steps, each with its own time limit, writing logs
# and JSON results under $OUT (or ./gpu-out when $OUT is unset):
#
#   bash bench/gpu_session.sh check deer tests          # default: check deer tests
#   bash bench/gpu_session.sh seed_full                 # the 2.1M-parameter seed model (issue 7)
#
# Steps: check, tests (pytest -m gpu), deer (bench/bench_deer.py), scan (bench/bench_scan.py),
# seed_full, seed_full4 (bench/bench_seed_full.py, 1 and 4 chains), regret (bench/bench_regret.py --quick).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(check deer tests)

if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || { echo "wheel install failed"; exit 1; }
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1 JAX_PLATFORMS=cuda,cpu PYMC_ACCEL_CACHE_DIR=/tmp/pymc-accel-cache

run() {  # run NAME SECONDS COMMAND...: log to $OUT/NAME.log, say how it ended
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  echo "=== $name (limit ${limit}s): $*"
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - start))s"
  tail -n 40 "$OUT/$name.log"
}

for step in "${steps[@]}"; do
  case $step in
    check)
      run check 120 python3 -c "
import jax, numpyro, pymc, pytensor, pymc_accel
print('jax', jax.__version__, jax.devices(), 'numpyro', numpyro.__version__)
print('pymc', pymc.__version__, 'pytensor', pytensor.__version__)
print(pymc_accel.discover_devices().summary())" ;;
    tests)
      run tests 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests ;;
    deer)
      run deer 420 python3 bench/bench_deer.py --device gpu --out "$OUT/deer-gpu.json" ;;
    scan)
      [ -f bench/bench_scan.py ] && run scan 240 python3 bench/bench_scan.py --device gpu ;;
    seed_full)  # the blog's run: 100 + 100 draws, one chain, with gradient timings
      run seed_full 560 python3 bench/bench_seed_full.py --gradients \
        --out "$OUT/seed-full-1chain.json" ;;
    seed_full4)  # the same with 4 chains (issue 7: under twice the one-chain time)
      run seed_full4 560 python3 bench/bench_seed_full.py --chains 4 \
        --out "$OUT/seed-full-4chains.json" ;;
    regret)
      [ -f bench/bench_regret.py ] && run regret 400 python3 bench/bench_regret.py --quick ;;
    *) echo "unknown step $step" ;;
  esac
done
