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
#   bash bench/gpu_session.sh check tests regret_gpu    # issue 4's GPU regret, in one lease
#   REGRET_GPU_LIMIT=380 bash bench/gpu_session.sh check numpyro_fixed regret_gpu
#                                   # the H200 lease of 2026-11-27: 528 s of a call (wheels and
#                                   # check 33 s, numpyro_fixed 133 s, the regret 380 s: seed_mid
#                                   # whole, pk_scan cut); it writes 7 files to $OUT, of the 8
#                                   # that come back: do not also tee the session's output there.
#                                   # Then, on the warm machine, a second call of 270 s:
#   REGRET_GPU_MODELS=pk_scan,glm_linear REGRET_GPU_PART=2 REGRET_GPU_LIMIT=215 \
#       bash bench/gpu_session.sh tests regret_gpu
#   The third H200 lease (2026-11-27, 15:15-15:27) ran that plan in two calls:
#   REGRET_GPU_LIMIT=300 bash bench/gpu_session.sh check launch_probe numpyro_fixed regret_gpu
#                                   # 439 s (check 18 s, launch_probe 5 s, numpyro_fixed 114 s,
#                                   # the regret 300 s: seed_mid whole, pk_scan cut)
#   REGRET_GPU_MODELS=pk_scan,glm_linear REGRET_GPU_PART=2 REGRET_GPU_LIMIT=330 \
#       bash bench/gpu_session.sh regret_gpu       # 332 s on the warm machine: pk_scan whole,
#                                   # glm_linear cut before its GPU float32 row; 810 s held
#   The fourth H200 lease (2026-11-27, 18:47-19:00) ran, 862 s held:
#   REGRET_GPU_LIMIT=400 bash bench/gpu_session.sh check tests regret_gpu
#                                   # 478 s (check 21 s, tests 55 s, the regret 400 s: glm_linear
#                                   # and seed_small whole, eight_schools's six candidates)
#   REGRET_GPU_MODELS=seed_mid REGRET_GPU_PART=2 REGRET_GPU_LIMIT=250 \
#       bash bench/gpu_session.sh host_threads regret_gpu   # 341 s (host_threads 88 s; seed_mid's
#                                   # six candidates, cut before its history and measure=True rows)
#   The fifth H200 lease (2026-11-30, 20:21-20:59) ran, 742 s held over two machines (the
#   first went back while idle between the first and second calls):
#   REGRET_GPU_MODELS=seed_mid,glm_poisson REGRET_GPU_LIMIT=510 \
#       bash bench/gpu_session.sh check regret_gpu     # 422 s (check 23 s; both models whole,
#                                   # seed_mid's measure=True rows included: about 4.5 and 2 min)
#   REGRET_GPU_MODELS=eight_schools REGRET_GPU_PART=2 REGRET_GPU_LIMIT=220 \
#       bash bench/gpu_session.sh tests regret_gpu     # 133 s on a fresh machine (tests 60 s)
#   REGRET_GPU_MODELS=funnel REGRET_GPU_PART=3 REGRET_GPU_LIMIT=150 \
#       bash bench/gpu_session.sh regret_gpu           # 73 s on the warm machine
#   The next lease's plan (timeout_s 590, then a second call at once on the warm machine):
#   REGRET_GPU_MODELS=pk_scan,glm_linear REGRET_GPU_LIMIT=460 \
#       bash bench/gpu_session.sh check calibration_spread regret_gpu
#   REGRET_GPU_MODELS=gp_200 REGRET_GPU_PART=2 REGRET_GPU_LIMIT=260 bash bench/gpu_session.sh regret_gpu
#   (the GPU calibration's spread between rounds, ~30 s: the fifth lease's three calibrations
#   gave loop iterations of 6.0-10.1 us; pk_scan, whose Scan is priced by compiled kernels
#   since 296445b, and glm_linear with today's
#   code; then as much of gp_200 as fits, which no lease has finished; seed_large after it)
#
# Steps: check, calibration_spread (bench/gpu_calibration_spread.py), launch_probe
# (bench/gpu_launch_probe.py), host_threads (NumPyro's CPU leapfrog
# with and without XLA's multi-threaded Eigen), tests (pytest -m gpu), deer (bench/bench_deer.py), scan (bench/bench_scan.py),
# seed_full, seed_full4 (bench/bench_seed_full.py, 1 and 4 chains), regret (bench/bench_regret.py
# --quick), numpyro_fixed (bench/fit_numpyro_fixed.py on the host's CPU and on the GPU),
# regret_gpu (the quick zoo at 200 + 200 draws; bench_regret writes its JSON after each candidate,
# so a run cut by its limit keeps what it measured, and `python bench/bench_regret.py
# --report-only FILE` rebuilds the tables from a cut run's file).
# REGRET_GPU_LIMIT (seconds, default 400) bounds that step, REGRET_GPU_MODELS names the models
# (comma-separated) and REGRET_GPU_PART numbers its JSON (regret-gpu-PART.json), for a second call
# on the still-warm machine. The H200 lease of 2026-11-26 (16 cores) finished eight_schools and
# glm_poisson (about 3 minutes each with the history step, six candidates) and cut seed_large and
# gp_200 (whose candidates take 10-40 s a run: six candidates' three runs each come to 6-8
# minutes, more than a lease's regret step holds), so the default order starts with the small
# models (since the third lease, those no lease has run with chain_map's fix), which finish in
# about 3 minutes each, and leaves gp_200 and seed_large for a call of their own (REGRET_GPU_MODELS=gp_200 or seed_large); a cut
# model's choice and finished rows are kept (bench_regret's "partial").
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(check deer tests)

if [ -d .whl ] && ! python3 -c "import pymc, nutpie" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || { echo "wheel install failed"; exit 1; }
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1 JAX_PLATFORMS=${JAX_PLATFORMS:-cuda,cpu} PYMC_ACCEL_CACHE_DIR=/tmp/pymc-accel-cache

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
print(pymc_accel.discover_devices().summary())
import numba, nutpie, scipy, numpy; print('numba', numba.__version__, 'nutpie', nutpie.__version__,
      'numpy', numpy.__version__, 'scipy', scipy.__version__)
# the host CPU, and whether NumPy vectorises float64 exp on it (AVX-512): the calibration's
# elementwise rate is a numba loop's since a1a6ee2 because NumPy's differs there
cpu = [l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')]
print('host cpu', cpu[:1], len(cpu), 'threads; numpy AVX512F',
      numpy._core._multiarray_umath.__cpu_features__.get('AVX512F'))
from pymc_accel.costmodel import start_up_pace
from pymc_accel.machine import machine_figures; f = machine_figures(devices=pymc_accel.discover_devices())
print('calibrated elementwise', {k: round(v / 1e9, 2) for k, v in f.cpu_flops.items()}, 'GFLOP/s;',
      'call', round(f.cpu_call_seconds * 1e6, 2), 'us; bandwidth',
      {k: round(v / 1e9, 1) for k, v in f.cpu_bandwidth.items()}, 'GB/s; Python loop',
      round((f.cpu_python_seconds or 0) * 1e3, 1), 'ms: start-up pace',
      round(start_up_pace(f), 2), '; share of a core the calibration got', f.cpu_share)
# the GPU's calibration, which its candidates' estimates are made of (not recorded before 2026-11-27)
for name, d in f.accelerators.items():
    print(name, d.kind, 'launch', round(d.launch_seconds * 1e6, 2), 'us, call',
          round(d.call_seconds * 1e6, 1), 'us; GB/s', {k: round(v / 1e9) for k, v in d.bandwidth.items()},
          'elementwise GFLOP/s', {k: round(v / 1e9) for k, v in d.flops.items()},
          'matmul GFLOP/s', {k: round(v / 1e9) for k, v in d.matmul_flops.items()})" ;;
    calibration_spread)  # the GPU's calibrated loop iteration and call, timed in rounds: min
      # against median of many timings (bench/gpu_calibration_spread.py)
      run calibration_spread 120 bash -c "python3 bench/gpu_calibration_spread.py \
          > $OUT/gpu-calibration-spread.jsonl" ;;
    launch_probe)  # a kernel's cost inside a loop iteration against the iteration's own; its
      # JSON lines are the log (bench/gpu_launch_probe.py)
      run launch_probe 90 python3 bench/gpu_launch_probe.py ;;
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
    regret_gpu)
      run regret_gpu "${REGRET_GPU_LIMIT:-400}" python3 bench/bench_regret.py --quick \
        --models ${REGRET_GPU_MODELS:-glm_linear,seed_small,eight_schools,glm_poisson,funnel,seed_mid,pk_scan,gp_200,seed_large} \
        --no-default-run --out "$OUT/regret-gpu-${REGRET_GPU_PART:-1}.json" ;;
    numpyro_fixed)  # NumPyro's fixed seconds on that host's CPU, and on its GPU with the
      # sampling of 200 + 200 draws set against its estimate (--long). On the H200 of 2026-11-27
      # the CPU's runs took 1.8-2.3 s a 10 + 10 draw run against 0.55 s modelled, 1.3-1.6 s of it
      # tracing chain_map's vmap (fixed in 6aacde7: this checks the fix there), and the GPU's
      # leapfrogs on seed_mid looked over-priced about 5x, its fixed seconds under-priced 3x
      run numpyro_fixed 300 bash -c "python3 bench/fit_numpyro_fixed.py \
          --models eight_schools,glm_poisson,seed_mid --jax-cache on --repeats 3 \
          --primer glm_linear > $OUT/fit-numpyro-fixed-cpu.jsonl; \
        python3 bench/fit_numpyro_fixed.py --models eight_schools,glm_poisson,seed_mid \
          --jax-cache on --repeats 2 --long 200 \
          --candidate 'numpyro[gpu,float64,chain_method=vectorized]' \
          > $OUT/fit-numpyro-fixed-gpu.jsonl" ;;
    host_threads)  # NumPyro's CPU leapfrog on the host (bench/fit_jax_gradient_timing.py's
      # in_sampler against its modelled figure), two XLA CPU devices in both runs, with XLA's
      # multi-threaded Eigen (its default) and without it. The third lease's host ran NumPyro's
      # seed_mid gradient at about 144 us against 88.5 modelled from its calibration; on 16
      # cores Eigen may split a 2,000-row model's ops over threads whose hand-offs cost more
      # than the work. 2 x ~20 s.
      run host_threads 120 bash -c "export JAX_PLATFORMS=cpu; \
        XLA_FLAGS=--xla_force_host_platform_device_count=2 python3 \
          bench/fit_jax_gradient_timing.py --models seed_mid,pk_scan \
          > $OUT/host-threads-default.jsonl; \
        XLA_FLAGS='--xla_force_host_platform_device_count=2 --xla_cpu_multi_thread_eigen=false' \
          python3 bench/fit_jax_gradient_timing.py --models seed_mid,pk_scan \
          > $OUT/host-threads-single.jsonl" ;;
    *) echo "unknown step $step" ;;
  esac
done
