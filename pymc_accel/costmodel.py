"""Cost-model formulas shared by backends: seconds per gradient, gradients per draw, compile.

Each figure is *modelled*: the machine's measured throughput (:mod:`pymc_accel.machine`: an
``exp`` loop compiled by numba, NumPy's bandwidth and matrix product) scaled by per-runtime
efficiency factors. The factors were fitted to gradients timed on a 2-core
x86-64 CPU for the seed hierarchical logistic model at 1k to 105k parameters (see
``docs/benchmarks.md``, "cost model fit"): a numba-compiled PyTensor gradient streams about 2.7x
NumPy's measured bandwidth (its loops are fused), a JAX-on-CPU gradient about 0.6x. These are
priors, not promises; ``measure=True`` replaces them with timings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from pymc_accel.backend import Estimate, Figure
from pymc_accel.census import RANKS, TRANSCENDENTAL_FLOPS
from pymc_accel.machine import MachineFigures
from pymc_accel.profile import ModelProfile


@dataclass(frozen=True)
class Runtime:
    """How one way of compiling a gradient uses a device, relative to the CPU's calibrated
    figures (:func:`pymc_accel.machine.calibrate`)."""

    name: str
    bandwidth_factor: float  # effective bytes/s as a multiple of NumPy's measured bandwidth
    flops_factor: float  # effective elementwise flops/s as a multiple of the calibrated rate
    per_gradient_seconds: float  # driver + call overhead per gradient evaluation
    per_dimension_seconds: float  # driver work per gradient per free dimension (vector ops)
    compile_seconds: float  # fixed compile and start-up cost of a run, compiled caches warm
    compile_seconds_per_kernel: float
    # XLA's CPU runtime spreads an op over a thread pool of every core, so chains side by side
    # compete for the cores whatever their working set; numba's kernels run in the chain's thread.
    threaded: bool = False
    # dense linear algebra's throughput (Cholesky, triangular solves, their gradients) as a
    # share of the machine's measured matmul throughput
    dense_efficiency: float = 1.0
    # work every kernel pays whatever its size (loop set-up, allocating its output; an XLA
    # thunk's dispatch), on the machine the figures were fitted on
    per_kernel_seconds: float = 0.0
    # elementwise kernels fused into loops by the compiler pay no per-kernel work of their own
    fused_elementwise: bool = False
    # whether float32 streams and computes faster than float64 outside dense linear algebra
    float32_gain: bool = True
    # what the runtime starts once per Python process (pymc_accel.first_use)
    first_use: tuple[str, ...] = ()
    # whether elementwise intermediates go through memory; a loop compiled whole keeps them in
    # registers (numba's fused loops are in its bandwidth_factor, fitted on whole gradients)
    streams_elementwise: bool = True
    # compiling a model's kernels that are not in the runtime's disk cache yet (a new or
    # changed model), beyond fixed_seconds: cold_compile_seconds(); 0 for a runtime without a
    # disk cache, whose fixed cost compiles every run
    cold_seconds: float = 0.0
    cold_seconds_per_kernel: float = 0.0
    # fixed seconds per kernel by the rank it loops over (census.RANKS: scalar, vector, loop
    # nest), in place of compile_seconds_per_kernel where the census counts them
    # (compile_seconds)
    compile_seconds_by_rank: tuple[float, ...] = ()
    # the first compile's seconds per kernel by loop rank on a machine that has compiled other
    # models (cold_compile_seconds), in place of cold_seconds_per_kernel there
    cold_seconds_by_rank_used: tuple[float, ...] = ()
    # seconds of one transcendental function's evaluation (census.transcendentals, in exps)
    # against the exp loop timed by calibration; 0: priced as 10 flops each, as other flops
    transcendental_factor: float = 0.0
    # whether float32 halves the bytes the runtime streams even where its arithmetic is no
    # faster than float64's (float32_gain False)
    float32_bytes_gain: bool = False
    # matrix-vector products (memory_bound_dense_bytes) as calls of their own, which the
    # runtime's other work does not overlap: their bytes at this multiple of NumPy's measured
    # bandwidth in the run's precision, added to the rest of the gradient; 0: streamed with
    # the gradient's other bytes at bandwidth_factor
    matvec_bandwidth_factor: float = 0.0
    # whether one matrix-vector product spreads over every core, so that chains side by side
    # take turns on them (XLA's: bench/fit_numpyro_tuning.py prices NumPyro's so); otherwise
    # each runs in its chain's thread (one BLAS thread a chain) and shares the bandwidth as the
    # rest of the gradient does
    matvec_threaded: bool = False
    # where float32 is not a full gain (float32_gain False): how many times float64's rate the
    # runtime's arithmetic outside dense linear algebra runs at in float32 (1: no faster)
    float32_flops_factor: float = 1.0
    # the same for its transcendental functions' evaluations (census.transcendentals, at
    # TRANSCENDENTAL_FLOPS each: _float32_compute); None: float32_flops_factor
    float32_transcendental_factor: float | None = None
    # whether the arithmetic charges TRANSCENDENTAL_FLOPS only for the transcendental functions
    # the census counts as evaluated (census.transcendentals) and one flop for each other op
    # named like one (arithmetic_flops): a power PyTensor's rewrites make a multiplication, a
    # log of an exp they cancel, a function of constant data they fold; False: census.flops
    arithmetic_by_evaluation: bool = False


# Fitted on the 2-core CPU machine to single gradients (split timing) and to whole runs side by
# side (bench/bench_pipeline.py): docs/benchmarks.md, "cost model fit".
# Driver work per leapfrog refitted once chains stopped being modelled as sharing bandwidth they
# do not share (bandwidth_sharing): on the 5,522-parameter seed model, 200 against 1,600
# iterations x 2 chains with every leapfrog counted, nutpie took 215 µs and PyMC's NUTS 400 µs
# per leapfrog around a 142 µs gradient, i.e. 1.3e-8 and 3.8e-8 s per dimension over their
# fixed per-step costs. nutpie's were refitted on 2026-11-29 (NUTPIE_KERNEL_SECONDS, below).
# Fixed costs are those of a run whose PyTensor numba cache is warm (every run of a model after
# its first), fitted to runs of 10 + 10 draws x 2 chains timed on three days: the quick zoo's
# models less gp_200 and seed_large (docs/results/fit-fixed-cpu.jsonl, fit-fixed-cpu-2026-11-24
# .jsonl) and nine more model shapes (zoo.shapes: docs/results/fit-fixed-shapes-cpu-2026-11-24
# .jsonl), by bench/fit_fixed.py. They follow the rank of the loops each kernel compiles, not
# the kernel count: nutpie 0.90 s + 1.9 ms per scalar kernel + 10 ms per vector loop + 57 ms per
# loop nest, each model's fit predicted within 1.37x when fitted without it (0.128 rms log
# error), where 0.44 s + 12 ms per kernel missed by up to 2.42x (0.364): it charged 15 scalar
# variables' 342 kernels 4.6 s (2.0 s timed) and eight schools' 117 kernels 1.9 s (1.3-1.9 s).
# PyMC's NUTS 0.23 s + 3.4, 4.0 and 10 ms (0.188 against 0.195 by kernels: graph rewrites and
# the gradient's construction; its compiled kernels load from the cache). The day's pace moves
# them all: 1.18x the fit on 2026-11-23, 0.93x and 0.96x on 2026-11-24 (history.machine_pace).
# A census without ranks (a profile stored by an older release) has every kernel charged as a
# vector loop (compile_seconds_per_kernel).
# Dense linear algebra: the marginal GP's gradient (a Cholesky of N x N, triangular solves and
# their gradients; 90-97% of its flops), timed alone in one BLAS thread at N = 100, 200 and 400,
# ran at 0.25, 0.49 and 0.47 of the machine's 384 x 384 matmul throughput under numba (LAPACK)
# and at 0.26 to 0.30 under JAX on the CPU (XLA's own decompositions): 1.57 ms and 2.84 ms at
# N = 200, against 1.02 and 2.03 ms modelled at full matmul speed.
NUMBA_DENSE_EFFICIENCY = 0.5
JAX_CPU_DENSE_EFFICIENCY = 0.28
# Per-kernel work: single gradients of the quick zoo's models timed alone against the roofline
# (bench/fit_gradients.py, docs/results/fit-gradients-cpu.jsonl); where the roofline is near
# zero the time is per-kernel work (pk_scan: 51.6 µs under numba and 189 µs under XLA against
# 2.5 and 11 µs of roofline). Least squares on relative error, the GP left out (its time is its
# Cholesky's): under numba 267 ns per kernel that is not elementwise (PyTensor fuses elementwise
# chains into one loop; a fit with both kinds gave elementwise kernels -10 ns), leaving pk_scan
# at 0.94 of its timing, eight schools at 1.09 and the seed models at 0.51 to 0.90; under XLA
# on the CPU 250 ns per kernel of any kind (the median of the models' residuals; pk_scan 0.79,
# seed models 0.61 to 1.0). The same timings showed float32 no faster than float64 under XLA on
# the CPU outside dense linear algebra (seed_mid 250 against 198 µs, glm_linear 120 against 90,
# pk_scan 147 against 189; the GP's Cholesky 1.99 against 3.91 ms).
NUMBA_KERNEL_SECONDS = 270e-9
# nutpie's leapfrog timed inside its own sampler (bench/fit_nutpie_leapfrog.py: compiled once,
# sampled at two lengths with every tuning and sampling leapfrog counted; docs/results/
# fit-nutpie-leapfrog-cpu-2026-11-29.jsonl, 36 models, the 2-core AVX2 machine). The figures
# above, fitted on gradients timed alone through a PyTensor function call, and a Rust driver
# priced as a Python one (2 µs + 13 ns a dimension, scaled by the machine's Python call
# overhead), priced its cheap gradients 3x-40x what they take: eight schools 10.2 µs a
# leapfrog against 1.4, the 503-group varying intercepts 46.4 against 10.7, 15 scalar
# variables' 342 kernels 21.8 against 0.5. Its transcendental-heavy ones were priced 0.4x-0.9x
# (logistic_101 215 against 236 µs, mixture_20000 245 against 635). Grid-fitted on the 23
# models of zoo.fit_models and zoo.leapfrog_shapes without compute-bound dense algebra: 54 ns a
# kernel that is not elementwise, a 0.5 µs driver with nothing per dimension measurable, plain
# arithmetic at 8x the calibrated rate and transcendental functions at 1.5x their calibrated
# cost (NUMBA_FLOPS_FACTOR, NUMBA_TRANSCENDENTAL_FACTOR). rms log error 1.27 -> 0.71 on those
# models, 0.83 -> 0.71 on the thirteen held-out models no figure was fitted on (groups_503
# 4.36x -> 2.28x, groups_53 4.34x -> 1.78x, poisson_groups_303 1.71x -> 1.16x, stochvol_402
# 2.16x -> 1.05x; lkj_20 0.39x -> 0.16x, its small dense algebra not fitted). PyMC's NUTS calls
# the same compiled kernels through a Python function call, whose per-kernel work stays
# NUMBA_KERNEL_SECONDS. What remains: the group models' gathers priced at 1.8-2.3x (their
# arrays stay in cache, priced at memory's bandwidth), 15 scalar variables at 8.5x, and the
# mixtures at 0.3-0.5x (the census counts 15 transcendental evaluations where logsumexp takes
# two a row).
NUTPIE_KERNEL_SECONDS = 54e-9
NUTPIE_DRIVER_SECONDS = 0.5e-6
# Plain arithmetic of numba's fused loops as a multiple of the calibrated rate (an exp loop's, at
# 10 flops an element): 4.0 until 2026-11-29, fitted with the per-kernel and driver work above.
NUMBA_FLOPS_FACTOR = 8.0
JAX_CPU_KERNEL_SECONDS = 250e-9
# A model's first compile on a machine (PyTensor's numba disk cache empty for its kernels):
# in a new process with an empty compile directory, after a primer model, the target's first
# 10 + 10 run less its second (bench/fit_cold_compile.py, docs/results/fit-cold-compile-cpu.jsonl):
# nutpie 1.2 s (funnel, 59 kernels) to 27.5 s (pk_scan, 533), PyMC's NUTS 1.5 to 29.2 s: 50
# and 53 ms per kernel through zero, each model at 0.35x to 1.18x of it (eight schools lowest).
# JAX kept no compile cache on disk until pymc_accel.jax_cache set one up: its sampler's first
# run of a program is priced apart since (JAX_CPU_SAMPLER_COLD_SECONDS, below).
NUMBA_NUTPIE_COLD_PER_KERNEL = 0.050
NUMBA_PYMC_COLD_PER_KERNEL = 0.053
# On a machine that has compiled other models, a new one's scalar kernels are mostly cached
# already (their code is the same from model to model) and its loops are not (a fused loop's
# code is the model's own). Eight new shapes run by PyMC's NUTS after six zoo models
# (fit_cold_compile.py --primer, docs/results/fit-cold-compile-used-cpu.jsonl) took 0.13x to
# 0.57x of the per-kernel figure above (the 342-kernel many_scalars 2.3 s against 18 s
# modelled), and the mixture, whose 32 loop nests are nested loops, 1.72x (25.9 s). Fit by loop
# rank with the empty machine's runs (each state its own scalar figure, 11 and 0.4 ms;
# fit_cold_compile.py --fit-by-rank): 0.4 ms per scalar kernel, 39 ms per vector loop, 193 ms
# per loop nest. On the primed machine's runs that is an rms log error of 0.37 with each run
# left out (worst 1.9x, the mixture), against 1.30 for the per-kernel figure (worst 8x); on the
# empty machine's, 0.44 either way, so the per-kernel figure stays there. Used for both numba
# drivers (they compile the same PyTensor kernels) once the run history holds
# USED_MACHINE_MODELS other models run with the numba backend: the empty machine's runs had
# one model compiled before them, the primed machine's six.
NUMBA_COLD_BY_RANK_USED = (0.0004, 0.039, 0.193)
# numba evaluates transcendental functions one element at a time through libm: exp took 5.4 ns
# an element in a numba loop against NumPy's vectorised 5.3 ns (what calibration times), and
# softplus 16.6 ns (census.TRANSCENDENTAL_EXP_EQUIVALENTS). Charged as 10 flops at numba's
# flop rate, an exp cost 1.3 ns: the logistic seed model's gradient (2,000 rows, seven exps'
# worth a row) was modelled at 62 µs and ran in 110-132 µs under nutpie. 1.0 until 2026-11-29;
# 1.5 fitted with NUMBA_FLOPS_FACTOR to nutpie's leapfrogs timed in its sampler.
NUMBA_TRANSCENDENTAL_FACTOR = 1.5
USED_MACHINE_MODELS = 5
# A matrix-vector product under numba is a BLAS call (gemv) of its own, not one of PyTensor's
# fused loops: a PyTensor numba function of X @ b and X.T @ r alone, one BLAS thread, streamed
# 1.50x-1.82x NumPy's calibrated bandwidth at 3000 x 100, 1000 x 200, 5000 x 20 and 20000 x 20
# (1.13x-1.25x and 0.69x-0.72x at 2000 x 30 and 2000 x 10, where the call dominates; 0.48x-1.27x
# at 100000 x 20, out of the 32 MB cache) in three runs on 2026-11-24: bench/fit_matvec.py,
# docs/results/fit-matvec-cpu.jsonl. Priced in the fused loops' 2.7x and overlapped with their
# arithmetic, as before, logistic_101's gradient (4.8 MB of X a gradient) was modelled at
# 131 µs; it took 175 µs alone and about 225 µs a leapfrog under nutpie (231 µs modelled now).
NUMBA_MATVEC_BANDWIDTH_FACTOR = 1.6
NUMBA_NUTPIE = Runtime("numba+nutpie", 2.7, NUMBA_FLOPS_FACTOR, NUTPIE_DRIVER_SECONDS, 0.0,
                       0.90, 0.0100,
                       compile_seconds_by_rank=(0.0019, 0.0100, 0.0572),
                       dense_efficiency=NUMBA_DENSE_EFFICIENCY,
                       per_kernel_seconds=NUTPIE_KERNEL_SECONDS, fused_elementwise=True,
                       first_use=("numba", "nutpie-numba"),
                       cold_seconds_per_kernel=NUMBA_NUTPIE_COLD_PER_KERNEL,
                       cold_seconds_by_rank_used=NUMBA_COLD_BY_RANK_USED,
                       transcendental_factor=NUMBA_TRANSCENDENTAL_FACTOR,
                       matvec_bandwidth_factor=NUMBA_MATVEC_BANDWIDTH_FACTOR)
# PyMC's Python NUTS: interpreter work on every leapfrog step, growing with the dimension.
NUMBA_PYMC = Runtime("numba+pymc", 2.7, NUMBA_FLOPS_FACTOR, 60e-6, 3.8e-8, 0.23, 0.0040,
                     compile_seconds_by_rank=(0.0034, 0.0040, 0.0103),
                     dense_efficiency=NUMBA_DENSE_EFFICIENCY,
                     per_kernel_seconds=NUMBA_KERNEL_SECONDS, fused_elementwise=True,
                     first_use=("numba",), cold_seconds_per_kernel=NUMBA_PYMC_COLD_PER_KERNEL,
                     cold_seconds_by_rank_used=NUMBA_COLD_BY_RANK_USED,
                     transcendental_factor=NUMBA_TRANSCENDENTAL_FACTOR,
                     matvec_bandwidth_factor=NUMBA_MATVEC_BANDWIDTH_FACTOR)
# JAX on the CPU driven call by call (DEER-MALA, the nutpie_jax plugin; measured mode's
# standalone gradient timings). Fixed cost (a warm run: JAX compiles on every run) refitted
# with the numba drivers', before NumPyro had its own runtime below: NumPyro's runs of 10 + 10
# draws x 2 chains took 2.4 to 3.2 s on the zoo's 59- to 117-kernel models, 4 to 5.7 s at 216 kernels and 5.3 to 6.8 s at 533 (pk_scan)
# (docs/results/fit-jax-cpu.jsonl), against 3.6 to 8.3 s modelled by the earlier 3.0 + 0.010.
JAX_CPU = Runtime("jax-cpu", 0.6, 1.0, 5e-6, 1e-9, 2.0, 0.008, threaded=True,
                  dense_efficiency=JAX_CPU_DENSE_EFFICIENCY,
                  per_kernel_seconds=JAX_CPU_KERNEL_SECONDS, float32_gain=False,
                  first_use=("jax",))
# A whole sampler compiled by XLA (NumPyro's or BlackJAX's NUTS under PyMC's sample_jax_nuts,
# chains on separate XLA CPU devices): timed at two lengths on the 2-core machine
# (bench/fit_numpyro_loop.py over docs/results/fit-numpyro-loop-cpu.jsonl and
# fit-jax-cpu.jsonl). Per leapfrog of two chains side by side: glm_linear 51 µs, glm_poisson 84,
# seed_small 18, seed_mid 118, and within noise of zero on eight schools, the funnel and pk_scan
# (533 kernels), where JAX_CPU modelled 48 to 614 µs: XLA fuses the leapfrog into the sampler's
# loop, so the 250 ns per kernel of a standalone jitted call is not paid, and the devices do
# not share a thread pool for their small kernels. Dense linear algebra calls LAPACK (SciPy's
# OpenBLAS), in one BLAS thread a chain since 2026-11-29 (backends.blas_threads; before, the
# chains took turns on its thread pool: the marginal GP at N = 200 ran 11 ms per leapfrog in
# float64, priced at 0.14 of the matmul throughput with the chains in turn). With one thread a
# chain, the marginal GP's leapfrogs at N = 100, 200 and 400 took 0.38, 2.4 and 11.9 ms in
# float64 and 0.19, 1.0 and 5.5 ms in float32: their dense work, less the rest of the modelled
# leapfrog, ran at 0.34-0.59 (float64) and 0.37-0.65 (float32) of the calibrated one-thread
# matmul throughput, growing with N, 0.45 their geometric mean, where numba's runs at 0.5
# (docs/results/fit-numpyro-leapfrog-cpu-2026-11-29-dense.jsonl; docs/benchmarks.md, "One
# BLAS thread a chain for the JAX samplers"). The LKJ models' small solves (3 x 3 to
# 10 x 10) are memory-bound here and priced by their bytes: their leapfrogs took 1.1-3.5x the
# modelled, the rest of the gap a price per LAPACK call that one family cannot fit.
# Fixed cost: the fastest 10 + 10 run less its leapfrogs fits 1.93 s + 5.0 ms per kernel on
# 2026-11-24's machine and 2.18 s + 6.4 ms on 2026-11-23's (2.1 to 4.8 s on the zoo); 2.0 s +
# 5.5 ms is between them. With
# these, NumPyro's estimates came to 1.15x to 1.46x its warm wall times over the recorded
# regret runs (geometric means) where JAX_CPU gave 1.6x to 2.5x (bench/replay_regret.py).
# XLA keeps the fused loop's elementwise intermediates in registers (streams_elementwise): on
# the Poisson GLM, whose census counts 4.7 MB a gradient, 60% of it elementwise, NumPyro ran
# 84-173 µs a leapfrog against 383 µs modelled with every byte streamed; 200 µs without them.
JAX_CPU_SAMPLER_DENSE_EFFICIENCY = 0.45
# float32 halves the bytes the sampler streams (float32_bytes_gain), though its arithmetic is
# no faster: in the held-out regret runs (docs/results/regret-cpu-1000-heldout.json), NumPyro
# in float32 took 1.19x-1.65x less wall time than in float64 on the five models with more
# than a megabyte of data a gradient, and on the zoo 1.3x-1.5x on seed_large; its float32
# estimates were 1.42x its walls on the held-out models, 2.38x on logistic_101
# (docs/benchmarks.md, "float32 in NumPyro's sampler"). Halving its arithmetic time as well
# (float32_gain) put seed_mid's and seed_large's float32 runs at 0.33x-0.50x their walls.
# The leapfrog refitted on 2026-11-25 (bench/fit_numpyro_leapfrog.py,
# docs/results/fit-numpyro-leapfrog-cpu.jsonl): the sampler compiled and tuned once, then run on
# from its tuned state at two lengths, three times each, so a leapfrog's cost is timed apart
# from the compile that the earlier whole-run timings carried (a second either way: 4 of 16
# models gave a figure), from the median walls as the regret benchmark judges. Grid-fitted to
# the 15 fit models whose leapfrogs stood out of that noise (the quick zoo, its shapes and 5
# larger ones, zoo.leapfrog_shapes): XLA's fused loop streams its bytes at 1.5x NumPy's
# bandwidth, matrix-vector products' with the rest, and computes at 2x NumPy's elementwise
# rate; 2 µs + 20 ns a dimension of the sampler's own work a leapfrog. rms log error 0.47 on
# the fitted models where the figures before had 0.79 (glm_poisson 1.97x, was 3.94x; a
# 20,000-row mixture 0.34x and seed_small 0.41x are the worst); on the 5 held-out models whose
# leapfrogs were timed, 0.36 where they had 1.02 (logistic_151 1.83x, was 4.53x; wide_202 1.16x,
# was 2.69x). Transcendental functions priced apart (transcendental_factor 0.5 or 1, as the
# numba runtimes' 1) gained under 5% on the fitted models and are not. The fixed seconds rise
# by what the cheaper leapfrogs leave of the same walls: 0.18 s over the fit_numpyro_tuning.py
# runs (2.50 to 2.68 s + 5.2 ms a kernel), added to the 2.0 s + 5.5 ms that
# fit_numpyro_loop.py's runs gave, which machine paces scale from.
# Those leapfrog and tuning runs sampled 1/p, not the posterior (the fit script's log density
# had its sign flipped twice, found 2026-11-25). Rerun on the posterior, the eleven largest fit
# models' leapfrogs cost 0.69x-1.99x what they had (geometric mean 1.16x, within the runs'
# spread), and the grid refitted on them fit no better than these figures (rms log error 0.534
# against 0.540 on the fitted lines, 0.773 against 0.564 on the held-out ones), so they stand
# (docs/results/fit-numpyro-leapfrog-cpu-2026-11-25.jsonl); the fixed seconds refit to
# 2.15 s + 4.1 ms a kernel over the seven rerun zoo models, which moved no choice in the
# replay of the recorded regret runs.
# Since 2026-11-26 the backends hand NumPyro and BlackJAX the position as one flat array
# (backends/flat_position.py), where every figure above was timed with PyMC's one array per
# value variable, which NumPyro carries through each step as a separate operand. The same
# seven zoo models run both ways side by side, 200 + 200 and 2000 + 2000 draws, three times
# each (bench/fit_numpyro_tuning.py --layout, docs/results/
# fit-numpyro-tuning-layouts-cpu-2026-11-26.jsonl): fixed seconds 0.55x (pk_scan, 5 variables)
# to 0.90x (2 variables), fitting 2.93 s + 3.48 ms a kernel flat against 3.17 s + 9.09 ms per
# variable on that hour's machine (the per-kernel term had carried the variables: the models
# with more kernels have more of them). The fixed seconds are the figures before scaled by
# those ratios, 2.2 s x 2.93 / 3.17 and 5.5 ms x 3.48 / 9.09. A leapfrog ran 0.78x-0.87x as
# long flat on the two models whose leapfrogs stood out of the noise (glm_poisson 74 against
# 95 µs, seed_mid 143 against 165 µs), which the leapfrog's figures do not take up yet.
# Its float32 arithmetic runs at 1.3x float64's rate (float32_flops_factor,
# JAX_CPU_SAMPLER_FLOAT32_FLOPS_FACTOR). Over every recorded regret run that ran NumPyro in
# both precisions (18 models, 1 to 21 files each), float32 was 1.15x-1.45x faster on the
# row-heavy models, where halving the bytes alone prices them equal: bench/fit_float32_compute.py
# (each precision priced with the leapfrogs its runs took, each model the median of its files)
# gives an rms log error of their ratio of 0.145 at 1.0, 0.110 at 1.3 and least 0.104 at 1.5
# (docs/results/fit-float32-compute-cpu.jsonl). Held back from 2026-11-25 to 2026-11-27 for the
# demo model, where 1.3 moves a new process's choice from nutpie to NumPyro's float32: at
# 1000 + 1000 draws that float32 ran at 0.91x nutpie's ESS/s. Adopted on 2026-11-27 (13:35):
# at the demo's own 500 + 500 it ran at 2.0x nutpie's (pooled 2.02, 90% interval 1.40-3.18;
# docs/results/regret-cpu-500-2026-11-27-demo-length.md), and over the day's eleven result
# files the replayed zoo went from 30 to 36 of 46 (model, file) pairs within 1.1 with no
# held-out choice moved (docs/benchmarks.md, "NumPyro's float32 arithmetic factor adopted").
# The leapfrog timings above came from MCMC.run calls from a tuned state, on the belief that a
# length's repeats reused its compiled program; each call compiles again (found 2026-11-26),
# so their differences carried the compile's noise. bench/fit_numpyro_leapfrog.py now runs
# NumPyro's tuned kernel in one compiled loop (docs/results/fit-numpyro-leapfrog-cpu-
# 2026-11-26.jsonl): 18 of the 23 fit models' leapfrogs stand out of the noise, where these
# figures err by an rms log error of 0.93, most of it their driver on the small models
# (funnel 10x, many_scalars 11x: 0.6 µs timed). The driver timed apart, NumPyro on standard
# normals (--driver 10,100,1000,5000): 0.91, 1.52, 14.6 and 62.2 µs a leapfrog on this
# machine, 0.40 µs + 4.7 ns a dimension at the reference call overhead. Taken as the driver
# (0.4 µs + 5 ns), it brings the leapfrog's rms log error to 0.57, but it moved the choice on
# seed_large (the demo model) to NumPyro in three of the four recorded files of it, at 1.61x
# to 1.88x nutpie's time per effective draw (bench/replay_regret.py): a whole NumPyro run
# costs more than its leapfrogs and fixed seconds as priced (its float64 estimates are 0.72x
# its warm walls, geometric mean, over the quick zoo's 08:50 runs, 0.61x with the lower
# driver), and the larger driver had carried some of that. So the driver stays at
# 2 µs + 20 ns until what a run pays outside the timed leapfrog is priced.
# Since 2026-11-26 (17:00) XLA's programs are kept on disk by JAX's persistent compilation
# cache (pymc_accel.jax_cache), so the fixed seconds above split into a run whose programs are
# cached and the first run of its program, which compiles them (cold_compile_seconds, charged
# until the history shows the candidate ran the model with the same tuning steps, draws and
# chains: the program fixes them). Timed in one hour, 10 + 10 draws x 2 chains, 13 fit models,
# each model's first run and three repeats with the cache on, and with it off in the next
# process (bench/fit_numpyro_fixed.py --jax-cache on|off, docs/results/
# fit-numpyro-jax-cache-{on,off}-cpu-2026-11-26.jsonl): a repeat that loads its programs took
# 0.20x-0.36x of one that compiles them (eight schools 0.81 against 3.66 s, pk_scan 2.25
# against 6.25 s), fitting 0.80 s + 2.77 ms a kernel (leave-one-out rms log error 0.16); a
# model's first run took 2.9-9.0 s more than its cached repeats, 3.54 s + 9.77 ms a kernel
# (0.34; seed_mid 0.59x, many_scalars 1.76x), beyond the compiling repeats of the cache-off
# process because it also pays what JAX keeps in memory for a program it has run. The hour's
# compiling repeats took 1.94x the fixed seconds above (a slow stretch of the machine: nutpie
# ran 1.3x-1.8x slow in the afternoon too), so both figures are scaled by 0.515 to the hour
# the others were fitted in, as machine_pace scales them to the present one.
JAX_CPU_SAMPLER_FLOAT32_FLOPS_FACTOR = 1.3
# Its float32 transcendental functions (exp, log1p, softplus, log-gamma) run at 2.5x float64's
# rate, apart from the rest of its arithmetic (float32_transcendental_factor). Timed in one
# compiled loop, NumPyro's float32 leapfrog is 1.55x-2.45x faster than its float64 one on models
# with such terms and 0.75x-0.87x on the two GLMs (docs/results/fit-numpyro-leapfrog-cpu-
# 2026-11-28-precisions.jsonl), where the one factor made every model 1.2x-1.7x. Priced on the
# functions' evaluations (census.transcendentals, which leave out the powers PyTensor makes
# multiplications and the logs and exps it cancels), bench/fit_float32_compute.py
# --transcendental gives an rms log error of the float64/float32 ratio over the recorded regret
# runs of 0.167 at 1.3 and 2.5 against 0.193 with 1.3 alone (docs/results/
# fit-float32-transcendental-evaluations-cpu-2026-11-28.txt). Replayed over the 31 files at
# 1000 + 1000 draws, the held-out models stay at 68 of 72 pairs within 1.1 and the zoo goes
# from 81 to 85 of 109 (seed_small chooses float32 in all 16 of its files); at 500 + 500, from
# 5 to 10 of 35, the demo model choosing NumPyro's float32 over nutpie (docs/benchmarks.md,
# "NumPyro's float32 transcendental functions priced by their evaluations"). Priced on the
# census's transcendental flops instead (c512e26), the powers of a Normal likelihood counted as
# transcendental, and groups_503 flipped to NumPyro's float32 at 1.97-2.24.
JAX_CPU_SAMPLER_FLOAT32_TRANSCENDENTAL_FACTOR = 2.5
# NumPyro's fixed seconds: a run whose programs are cached, and a model's first run beyond that
# (docs/benchmarks.md, "JAX's compile cache on disk"; fitted 2026-11-26, 0.41 s + 1.43 ms and
# 1.82 s + 5.0 ms a kernel). The first run's was scaled on 2026-11-30 when the log density
# became one compiled program (run_logp.JIT_LOGP): PyMC evaluated it op by op at the initial
# points, each op a program XLA compiled. Fitted side by side in one hour on the same 14 models
# (bench/fit_numpyro_fixed.py --jax-cache on, with and without --pymcs-initial-points;
# docs/results/fit-numpyro-fixed-cpu-2026-11-30-*.jsonl), a first run beyond a repeat went from
# 1.503 s + 2.48 ms a kernel to 1.313 s + 1.14 ms; those ratios (0.874, 0.46) scale the figures
# here. A repeat in the process, whose op programs JAX holds in memory, barely moved (0.280 s +
# 1.02 ms against 0.296 s + 0.90 ms) and is left as fitted.
JAX_CPU_SAMPLER_CACHED_SECONDS = 0.41
JAX_CPU_SAMPLER_CACHED_PER_KERNEL = 0.00143
JAX_CPU_SAMPLER_COLD_SECONDS = 1.59
JAX_CPU_SAMPLER_COLD_PER_KERNEL = 0.0023
JAX_CPU_SAMPLER = Runtime("jax-cpu-sampler", 1.5, 2.0, 2e-6, 2e-8,
                          JAX_CPU_SAMPLER_CACHED_SECONDS, JAX_CPU_SAMPLER_CACHED_PER_KERNEL,
                          cold_seconds=JAX_CPU_SAMPLER_COLD_SECONDS,
                          cold_seconds_per_kernel=JAX_CPU_SAMPLER_COLD_PER_KERNEL,
                          streams_elementwise=False,
                          dense_efficiency=JAX_CPU_SAMPLER_DENSE_EFFICIENCY,
                          per_kernel_seconds=0.0, float32_gain=False, float32_bytes_gain=True,
                          float32_flops_factor=JAX_CPU_SAMPLER_FLOAT32_FLOPS_FACTOR,
                          float32_transcendental_factor=JAX_CPU_SAMPLER_FLOAT32_TRANSCENDENTAL_FACTOR,
                          arithmetic_by_evaluation=True, first_use=("jax",))
# One numba-compiled logp-and-gradient function, what measured mode compiles to time a numba
# candidate (PyMC's own, raveled inputs: the function its NUTS compiles), with the model's
# kernels in PyTensor's compile cache: 0.22 s (funnel, 59 kernels), 0.32-0.39 s (89-117),
# 0.61-0.63 s (216), 0.82 s (gp_200) and 1.15 s (pk_scan, 533), medians of three
# (bench/fit_measured_compiles.py, docs/results/fit-measured-compiles-pymc-function-cpu.jsonl);
# the fit leaves each model at 0.83x-1.27x. A model whose kernels are not cached yet adds its
# first compile (cold_compile_seconds). The figures before 2026-11-24, 2.0 s + 25 ms per
# kernel, priced every compile cold, so measured mode timed no numba candidate within its 5 s
# on any zoo model but the funnel; those of the morning (0.05 s + 1.8 ms) were fitted to a
# function of the unraveled variables, whose kernels the runs do not cache.
NUMBA_GRADIENT_COMPILE_SECONDS = 0.085
NUMBA_GRADIENT_COMPILE_PER_KERNEL = 0.0024
# One jitted value-and-grad, not the whole sampler: 0.44-0.67 s measured (docs/benchmarks.md).
JAX_GRADIENT_COMPILE_SECONDS = 0.4
JAX_GRADIENT_COMPILE_PER_KERNEL = 0.002
# PyTensor function call overhead (numba mode, trust_input) on the machine the runtimes' driver
# figures were fitted on; machine.cpu_call_seconds scales them to another machine.
REFERENCE_CALL_SECONDS = 2.5e-6  # measured: 2.55 µs median on the 2-core fit machine
# A GPU's figures are modelled from its class until measured: launch latency dominates small
# models (numpyro issue 1466: ~300x slower than CPU for a 4-group model), bandwidth large ones.
GPU_LAUNCH_SECONDS = 8e-6
GPU_BANDWIDTH = 1.5e12
GPU_FLOPS = {"float32": 3e13, "float64": 1e12}
#: Leapfrogs that chains vectorized on one device pay over those they use
#: (``Estimate.vectorized_trees``; one GPU runs NumPyro's chains so). Under ``jax.vmap`` NUTS's
#: tree-building loops run until every chain's tree is done, so each draw costs the group's
#: largest tree. A chain's trees do not depend on the layout, so a CPU run's ``n_steps`` per
#: chain and draw gives the factor (``bench/fit_vectorized_trees.py``,
#: docs/results/fit-vectorized-trees-cpu-2026-11-27.jsonl; 500 + 500 draws, 2 seeds). The
#: geometric mean over fifteen models with 4 chains is 1.21 (1.00 to 1.45; the funnel 2.78),
#: and over seven with 2 chains 1.18 (1.00 to 1.35; the funnel 1.65).
VECTORIZED_TREE_FACTOR = 1.2
#: Seconds JAX spends tracing NumPyro's sampler batched over vectorized chains beyond tracing
#: it for one chain: batching NUTS's nested while loops traces each loop body again until it
#: knows which carries the batch reaches. Timed on the CPU against NumPyro's pmap
#: (``bench/fit_numpyro_fixed.py --option chain_method=vectorized``, 10 + 10 draws x 2 chains,
#: eight schools, glm_poisson, pk_scan, seed_mid), the trace took 0.26 to 0.69 s longer
#: (docs/results/fit-numpyro-fixed-{vectorized,pmap}-cpu-2026-11-27.jsonl). The H200 host's GPU
#: runs of eight schools and glm_poisson traced for 0.68 and 0.93 s.
VMAP_TRACE_SECONDS = 0.5
#: A NUTS leapfrog of a JAX sampler compiled whole (NumPyro's, BlackJAX's) on a GPU, in units
#: of the GPU's calibrated loop iteration (``DeviceFigures.launch_seconds``: a ``fori_loop``
#: iteration of one kernel, which includes copying the loop's condition to the host): the
#: tree-building and U-turn while loops' own iterations (:data:`NUTS_GPU_LOOP_ITERATIONS`),
#: plus each of the gradient's kernels queued inside an iteration at
#: :data:`GPU_KERNEL_IN_LOOP_SHARE` of one. Until 2026-11-27 a leapfrog was priced at a third of
#: the gradient's kernels, each at a whole iteration: 2.7x the H200's runs on seed_mid (476 µs
#: against 163) and 1.3-1.6x on the small models. From the third H200 lease (2026-11-27,
#: ``bench/fit_gpu_leapfrog.py``): ``bench/gpu_launch_probe.py`` timed a kernel inside an
#: iteration at 0.42 µs against 6.6 µs an iteration (the share), and the sampler's warm runs of
#: five models (200 + 200 draws x 2 chains, 24 runs) give 17.9 iterations a leapfrog, the median
#: over models (seed_mid 11, the small models 17-23, pk_scan's parallel prefix 56). Measured
#: mode's standalone GPU gradients (eight schools 32 µs, glm_poisson 7-13, seed_mid 67-87, from
#: all three leases) plus 18 iterations come to 0.85-1.14x the leapfrogs these runs imply.
NUTS_GPU_LOOP_ITERATIONS = 18.0
GPU_KERNEL_IN_LOOP_SHARE = 0.064
#: Fixed seconds a GPU run of a JAX sampler pays beyond the CPU's figure: loading its XLA
#: programs onto the device (0.54 s against the CPU's 0.18-0.24 s on the second H200 lease). The
#: third lease's runs of 10 + 10 draws gave 0.16 s over the modelled fixed seconds (median of six;
#: ``bench/fit_gpu_leapfrog.py``).
GPU_PROGRAM_LOAD_SECONDS = 0.16
#: Each chain's gradient in chains vectorized under ``jax.vmap`` on one CPU device, against the
#: same chains priced one after another there, by sampler (``JaxNutsBackend.estimate``: PyMC's
#: BlackJAX path on fewer JAX CPU devices than chains, NumPyro asked for
#: ``chain_method="vectorized"``); :data:`VMAP_TRACE_SECONDS` is added to the fixed seconds.
#: The batched trees wait for the longest (:data:`VECTORIZED_TREE_FACTOR`) and the batched
#: loops select over the whole state. NumPyro: two chains on one device, vectorized against in
#: turn, later runs of 500 + 500 draws took 1.69x (seed_mid), 1.83x (glm_poisson) and 1.83x
#: (eight schools), which the estimates give at 1.7 (1.70x, 1.76x, 1.85x; bench/
#: bench_cpu_chain_layout.py, docs/results/cpu-chain-layout-2026-11-27.json). BlackJAX (which
#: cannot run chains in turn under PyMC): one device against two, runs 2.02-2.64x, estimates
#: at 1.3 1.91-2.43x, ratio error 0.72-1.04x, where pricing its chains in turn gave 0.40-0.78x
#: (bench/bench_one_device_estimate.py --backend blackjax_nuts,
#: docs/results/one-device-estimate-blackjax-cpu-2026-11-27.json).
CPU_VECTORIZED_FACTOR = {"numpyro": 1.7, "blackjax": 1.3}
#: The first compile of NumPyro's sampler for a GPU (a model's first GPU run, before JAX's disk
#: cache holds its programs): ``GPU_COLD_SECONDS + GPU_COLD_SECONDS_PER_KERNEL * kernels``.
#: Fitted on the two H200 leases' first runs less their warm runs (9 runs of 4 models,
#: ``bench/fit_gpu_cold_compile.py``): eight schools 9.9-14.2 s, glm_poisson 11.9-14.0,
#: seed_mid 21.9-22.8, pk_scan 51.9 (478 kernels with its scan as a parallel prefix); the fit is
#: 0.76-1.36x of each run. The CPU's figure (:func:`cold_compile_seconds`) gives 2.3-4.2 s for
#: these models, and the GPU was priced at it until 2026-11-27.
GPU_COLD_SECONDS = 1.5
GPU_COLD_SECONDS_PER_KERNEL = 0.103


@dataclass(frozen=True)
class XlaProgramOp:
    """What XLA on the CPU charges for each occurrence, in the census, of an op that JAX
    lowers to a program of its own, far beyond the kernels the census counts for it
    (:data:`XLA_PROGRAM_OPS`). Seconds at the fit machine's start-up pace for the compiles
    (:func:`start_up_pace` scales them), as timed for the gradient."""

    #: one evaluation of the log density and its gradient, each op
    leapfrog_seconds: float
    #: a NumPyro run whose programs JAX's disk cache holds (loading and the few programs it
    #: compiles every run)
    cached_seconds: float
    #: a model's first run, beyond a cached one: XLA compiles the sampler's program
    cold_seconds: float
    #: one jitted logp-and-gradient in a compiled loop, as measured mode compiles it
    gradient_compile_seconds: float


#: Ops JAX lowers to programs of their own: ``pt.linalg.expm`` becomes Pade approximants of
#: five degrees chosen by a switch and a loop of squarings, hundreds of XLA ops where the census
#: counts one dense op (and one more for its gradient). On a Markov chain seen at 2 to 32
#: intervals (``bench/zoo.py``'s ``ctmc_N``, two ``Expm`` an interval in the census), NumPyro's
#: first run of 10 + 10 draws took 4.4 to 33.9 s where 1.9 to 2.6 s was modelled at the
#: machine's pace, its repeats 0.7-4.4 s against 0.5-0.7, its leapfrog 16-248 µs against 2-5,
#: and measured mode's compile 1.7-13.2 s against 0.7-1.2, over its 5 s budget from 16
#: intervals on. Fitted per op through the origin (bench/fit_xla_program_ops.py;
#: docs/benchmarks.md, "JAX's matrix exponential priced by the program XLA compiles"); charged
#: to every XLA runtime on the CPU (``"jax"`` in ``first_use``), not yet on a GPU.
XLA_PROGRAM_OPS: dict[str, XlaProgramOp] = {
    "Expm": XlaProgramOp(leapfrog_seconds=3.77e-6, cached_seconds=0.078, cold_seconds=0.574,
                         gradient_compile_seconds=0.187),
    # each node of the incomplete gamma function (census.series_evaluations' "GammaInc
    # nodes"), whose value and derivative in the shape are while loops XLA compiles on their
    # own; their leapfrog is priced by the element (series_function_seconds). On a copula, a
    # truncated gamma regression and interval-censored waiting times with 1 to 8 nodes
    # (bench/zoo.py), NumPyro's first run took 2.7-13.9 s beyond what the census's kernels
    # charge, its repeats 0.26-0.63 s, measured mode's compile 1.0-9.4 s (fitted through the
    # origin, bench/fit_xla_program_ops.py --op igamma)
    "igamma": XlaProgramOp(leapfrog_seconds=0.0, cached_seconds=0.118, cold_seconds=2.40,
                           gradient_compile_seconds=1.09),
}


def xla_program_ops(profile: ModelProfile) -> dict[str, int]:
    """How many of each :data:`XLA_PROGRAM_OPS` op the census found in the log density and its
    gradient: dense operands (``Expm``), and the nodes of the incomplete gamma function
    (``igamma``, ``census.series_evaluations``)."""
    ops = getattr(profile.census, "dense_linalg_operands", None) or []
    counts: dict[str, int] = {}
    for op in ops:
        if op.op in XLA_PROGRAM_OPS:
            counts[op.op] = counts.get(op.op, 0) + 1
    series = getattr(profile.census, "series_evaluations", None) or {}
    nodes = int(series.get("GammaInc nodes", 0) + series.get("GammaIncC nodes", 0))
    if nodes and "igamma" in XLA_PROGRAM_OPS:
        counts["igamma"] = nodes
    return counts


def xla_program_seconds(profile: ModelProfile, what: str) -> float:
    """Seconds XLA on the CPU charges beyond the census's kernels for the ops JAX lowers to
    programs of their own (:data:`XLA_PROGRAM_OPS`: ``pt.linalg.expm``).

    A plugin whose run compiles a JAX program of its own prices it with this; the built-in
    runtimes' figures include it already.

    Parameters
    ----------
    profile : ModelProfile
    what : {"leapfrog", "cached", "cold", "gradient_compile"}
        One evaluation of the log density and its gradient; a NumPyro run whose programs JAX's
        disk cache holds; a model's first run beyond that; one jitted logp-and-gradient's
        compile (:class:`XlaProgramOp`).

    Returns
    -------
    float
        Seconds; 0 for a model without such ops.
    """
    if what not in ("leapfrog", "cached", "cold", "gradient_compile"):
        raise ValueError(f"what must be 'leapfrog', 'cached', 'cold' or 'gradient_compile', "
                         f"not {what!r}")
    seconds = 0.0
    for name, count in xla_program_ops(profile).items():
        op = XLA_PROGRAM_OPS[name]
        seconds += count * getattr(op, f"{what}_seconds")
    return seconds


#: What the functions JAX computes by loops run to convergence (``census.SERIES_FUNCTIONS``)
#: cost XLA on the CPU in a leapfrog, by precision, in evaluations of ``exp`` in that precision
#: as machine calibration times it (a compiled loop's: 10 flops at ``cpu_flops``), by
#: ``census.series_evaluations`` key. JAX computes the incomplete gamma function (``igamma``,
#: ``igammac``) and its derivative in the shape (``igamma_grad_a``) by a power series and a
#: continued fraction, each looped over the whole batch until its slowest element converges
#: (``pymc_accel.xla_series`` counts the iterations at the initial point, in each precision:
#: float32's machine epsilon ends them sooner). So an element costs a fixed part (the
#: function's name, and ``'0`` for the derivative in the shape), more where its shape is its
#: own rather than one value broadcast (``own shape``), and a part for each iteration of each
#: loop (``"igamma series"``, ...: elements times iterations). Derivatives in the other inputs
#: are a few ordinary functions, which the census counts (``ModelProfile.xla_census``). Fitted
#: on JAX's ``igamma`` and ``igamma_grad_a`` over 4,000 elements at 24 shapes and ranges of
#: ``x``, each with a shared and an own shape (``bench/fit_xla_series_functions.py --loops``,
#: worst errors 1.28x and 1.11x in float64, 1.43x and 1.38x in float32, over 48 timings each).
#: In float64, at 4.2 ns an ``exp``: 19 ns an element (13 more with its own shape), 1.8 ns a
#: series iteration and 6.5 ns a continued fraction's; 21 (49 more), 3.1 and 8.6 ns for the
#: derivative. The incomplete beta function is not priced: a censored Student-t's 2,000 rows
#: cost NumPyro 35 µs of its 96 µs leapfrog.
XLA_SERIES_EXP_EQUIVALENTS: dict[str, dict[str, float]] = {
    "float64": {
        "GammaInc": 4.60, "GammaIncC": 4.60, "igamma own shape": 3.19,
        "igamma series": 0.42, "igamma fraction": 1.54,
        "GammaInc'0": 5.04, "GammaIncC'0": 5.04, "igamma_grad_a own shape": 11.46,
        "igamma_grad_a series": 0.73, "igamma_grad_a fraction": 2.03,
    },
    "float32": {
        "GammaInc": 6.75, "GammaIncC": 6.75, "igamma own shape": 9.63,
        "igamma series": 0.35, "igamma fraction": 1.59,
        "GammaInc'0": 5.93, "GammaIncC'0": 5.93, "igamma_grad_a own shape": 14.48,
        "igamma_grad_a series": 0.54, "igamma_grad_a fraction": 2.80,
    },
}


def series_function_seconds(profile: ModelProfile, machine: MachineFigures,
                            precision: str) -> float:
    """Seconds one leapfrog of an XLA runtime on the CPU spends in the functions JAX computes
    by loops run to convergence for each element (:data:`XLA_SERIES_EXP_EQUIVALENTS`,
    ``census.series_evaluations``); 0 for a model without them.

    Parameters
    ----------
    profile : ModelProfile
    machine : MachineFigures
        Its ``cpu_flops`` price one ``exp`` (10 flops).
    precision : {"float64", "float32"}
        The loops' iterations and figures of this precision.

    Returns
    -------
    float
    """
    from pymc_accel.xla_series import FLOAT32_SUFFIX

    evaluations = getattr(profile.census, "series_evaluations", None) or {}
    table = XLA_SERIES_EXP_EQUIVALENTS.get(precision, {})
    suffix = FLOAT32_SUFFIX if precision == "float32" else ""
    exps = sum(evaluations.get(key + suffix, evaluations.get(key, 0.0)) * figure
               for key, figure in table.items())
    return exps * TRANSCENDENTAL_FLOPS / machine.cpu_flops[precision] if exps else 0.0


def _on_xla(runtime: Runtime) -> bool:
    """Whether ``runtime`` runs XLA's programs (JAX's CPU runtimes start JAX)."""
    return "jax" in runtime.first_use


#: Last-level cache assumed when the operating system does not report one.
DEFAULT_CACHE_BYTES = 8 * 2**20


def _precision_bytes(profile: ModelProfile, precision: str) -> float:
    scale = 1.0
    if profile.float_dtype == "float64" and precision == "float32":
        scale = 0.5
    elif profile.float_dtype == "float32" and precision == "float64":
        scale = 2.0
    return profile.census.bytes * scale


def cpu_gradient_seconds(
    profile: ModelProfile,
    machine: MachineFigures,
    precision: str,
    runtime: Runtime,
    parallel_chains: int = 1,
) -> Figure:
    """Modelled seconds of one logp-and-gradient evaluation on one CPU core, driver included.

    Memory bandwidth is one resource for the whole CPU: chains running side by side share it.

    Parameters
    ----------
    profile : ModelProfile
    machine : MachineFigures
    precision : {"float32", "float64"}
    runtime : Runtime
        How the gradient is compiled and driven (:data:`NUMBA_NUTPIE`, :data:`NUMBA_PYMC`,
        :data:`JAX_CPU`, or a plugin's own).
    parallel_chains : int, default 1
        Chains running at the same time on this CPU.

    Returns
    -------
    Figure
    """
    profile = as_run_by(profile, runtime)
    seconds = _cpu_roofline(profile, machine, precision, runtime, parallel_chains)
    seconds += driver_seconds(profile, machine, runtime)
    return Figure(seconds, "modelled", f"{runtime.name} roofline on measured CPU figures")


def as_run_by(profile: ModelProfile, runtime: Runtime | None = None) -> ModelProfile:
    """``profile`` with the census of what ``runtime`` runs: for an XLA runtime (``None``: a
    GPU's), the log density and the gradient JAX takes of it where the two differ
    (``profile.xla_census``: functions JAX computes by loops of its own, whose PyTensor
    gradient is a loop of dozens of ops an element), else ``profile`` itself."""
    xla = getattr(profile, "xla_census", None)
    if xla is None or (runtime is not None and not _on_xla(runtime)):
        return profile
    return replace(profile, census=xla)


def as_compiled_by(profile: ModelProfile) -> ModelProfile:
    """``profile`` with the census of the kernels a compiler generates code for, where it
    differs from what a gradient runs: the log density with each function computed by series
    replaced by its stand-in (``profile.xla_census``), for every runtime.

    PyTensor writes the derivative of ``gammainc`` in the shape as its scalar graph made
    elementwise, about 217 kernels a node in the census, and every compiler fuses them back
    into a few loops: numba compiled 17 to 30 nodes for the interval, copula, censored and
    truncated gamma models' log density and gradient, whose censuses count 438 to 740 kernels
    (217 to 434 of them such derivatives). Their first compiles under both numba drivers took
    0.18x to 0.28x of what the per-kernel figure charged for the whole census
    (``bench/fit_cold_compile.py``,
    ``docs/results/fit-cold-compile-series-cpu-2026-12-01.md``), and 0.50x to 0.78x of it
    for the stand-in's census on three of the four with the derivative, within the 0.26x to
    1.10x the fit's own models took there today (``fit-cold-compile-cpu-2026-12-01.jsonl``);
    the copula, whose other kernels are most of its census, at 0.27x. Only the first compile
    is priced on it (:func:`cold_compile_seconds`): a numba gradient runs PyTensor's
    derivative, and a run's own compile and leapfrogs are priced on PyTensor's census
    (:func:`as_run_by`), which their warm runs followed."""
    xla = getattr(profile, "xla_census", None)
    return profile if xla is None else replace(profile, census=xla)


def _cpu_roofline(
    profile: ModelProfile, machine: MachineFigures, precision: str, runtime: Runtime,
    parallel_chains: int,
) -> float:
    c = profile.census
    # a matrix-vector product's time is its bytes (streamed with the rest, or on their own
    # at the runtime's matvec rate): only the dense work that is compute-bound
    # (decompositions, solves, matrix products) runs at the dense rate
    dense = compute_bound_dense_flops(profile)
    sharing = bandwidth_sharing(profile, machine, runtime, parallel_chains)
    # a runtime without float32 gain streams and computes as in float64 (dense work aside)
    streaming = precision if runtime.float32_gain else "float64"
    # bytes in the run's precision where the runtime streams float32's half of them
    moving = precision if runtime.float32_gain or runtime.float32_bytes_gain else "float64"
    bandwidth = runtime.bandwidth_factor * machine.cpu_bandwidth[moving] / sharing
    streamed = _precision_bytes(profile, moving)
    if not runtime.streams_elementwise:  # fused into the loop: intermediates stay in registers
        streamed *= 1.0 - c.bytes_by_category["elementwise"] / c.bytes if c.bytes else 1.0
    matvec = 0.0
    if runtime.matvec_bandwidth_factor:
        streamed = max(0.0, streamed - memory_bound_dense_bytes(profile, moving))
        matvec_rate = runtime.matvec_bandwidth_factor * machine.cpu_bandwidth[precision]
        matvec_rate /= max(1, parallel_chains) if runtime.matvec_threaded else sharing
        matvec = memory_bound_dense_bytes(profile, precision) / matvec_rate
    stream = streamed / bandwidth
    compute = ((arithmetic_flops(profile, runtime) - c.flops_by_category["dense_linalg"])
               / (runtime.flops_factor * machine.cpu_flops[streaming]))
    if runtime.transcendental_factor:
        compute += transcendental_seconds(profile, machine, streaming, runtime)
    if precision == "float32" and not runtime.float32_gain:
        compute = _float32_compute(compute, profile, machine, streaming, runtime)
    # each chain's dense work in its own BLAS thread (backends.blas_threads)
    dense_rate = runtime.dense_efficiency * machine.cpu_matmul_flops[precision]
    kernels = kernel_work_seconds(profile, machine, runtime)
    if runtime.threaded:  # XLA's kernels of chains side by side take turns on the thread pool
        kernels *= max(1, parallel_chains)
    programs = 0.0
    if _on_xla(runtime):
        programs = (xla_program_seconds(profile, "leapfrog")
                    + series_function_seconds(profile, machine, precision))
    return max(stream, compute) + matvec + dense / dense_rate + kernels + programs


def arithmetic_flops(profile: ModelProfile, runtime: Runtime) -> float:
    """Flops one gradient costs ``runtime``: the census's, or, for a runtime whose
    ``arithmetic_by_evaluation`` is set, with ops named like transcendental functions that the
    census does not count as evaluated charged one flop each, not
    :data:`~pymc_accel.census.TRANSCENDENTAL_FLOPS`.

    XLA compiles the log density after PyTensor's rewrites, which make ``x ** 2`` a
    multiplication and cancel or fold most of the other ops so named that a PyMC log density
    and its gradient hold (a Normal likelihood's squares, ``log(exp(x))``, the log-factorial of
    observed counts). At ten flops each they were a third of the flops priced on the
    non-centred group models (33-39%): NumPyro's leapfrog there was priced at 1.59x-2.10x what
    it takes (groups_503; poisson_groups_303 1.66x-1.84x, groups_53 1.36x-1.53x), and is at
    1.12x-1.52x, 1.20x-1.33x and 0.97x-1.13x charged so. With the factors as they are, the
    fitted lines' rms log error goes from 0.700 to 0.669 and the held-out lines' from 0.615 to
    0.710, the models already priced low (lkj_20, negbin_12) going lower
    (``bench/fit_numpyro_leapfrog.py --fit
    docs/results/fit-numpyro-leapfrog-cpu-2026-11-28-tall-products-all.jsonl``;
    docs/benchmarks.md, "NumPyro's arithmetic charged by the transcendental functions it
    evaluates")."""
    c = profile.census
    if not runtime.arithmetic_by_evaluation:
        return c.flops
    # census.transcendental_flops: the 9 flops beyond one of every op so named
    evaluated = (TRANSCENDENTAL_FLOPS - 1.0) * sum(c.transcendentals_by_function.values())
    return c.flops - max(0.0, c.transcendental_flops - evaluated)


def kernel_work_seconds(profile: ModelProfile, machine: MachineFigures,
                        runtime: Runtime) -> float:
    """Seconds one gradient pays in the work every kernel does whatever its size
    (``runtime.per_kernel_seconds``, at this machine's call overhead), elementwise kernels left
    out where the runtime fuses them; one chain's, before the threaded runtime's sharing."""
    c = profile.census
    counted = c.kernels - (c.kernels_by_category["elementwise"] if runtime.fused_elementwise else 0)
    return counted * runtime.per_kernel_seconds * _machine_scale(machine)


def _float32_compute(compute: float, profile: ModelProfile, machine: MachineFigures,
                     streaming: str, runtime: Runtime) -> float:
    """``compute`` (float64's seconds of arithmetic outside dense linear algebra) in float32, for
    a runtime whose float32 is not a full gain: the transcendental functions' evaluations
    (``census.transcendentals``, ``TRANSCENDENTAL_FLOPS`` each) at
    ``float32_transcendental_factor`` times float64's rate, the rest at
    ``float32_flops_factor``.

    The evaluations, not the flops the census charges ops named like transcendental functions
    (``census.transcendental_flops``): those include the powers PyTensor's rewrites make
    multiplications (a Normal likelihood's squares) and the logs and exps they cancel or fold
    to constants, which leave a non-centred group model with half its flops "transcendental"
    and no evaluation of one."""
    factor = runtime.float32_transcendental_factor
    if factor is None or factor == runtime.float32_flops_factor:
        return compute / runtime.float32_flops_factor
    c = profile.census
    rate = runtime.flops_factor * machine.cpu_flops[streaming]
    arithmetic = arithmetic_flops(profile, runtime) - c.flops_by_category["dense_linalg"]
    evaluated = TRANSCENDENTAL_FLOPS * c.transcendentals
    transcendental = min(compute, min(evaluated, arithmetic) / rate)
    return (compute - transcendental) / runtime.float32_flops_factor + transcendental / factor


def transcendental_seconds(profile: ModelProfile, machine: MachineFigures, precision: str,
                           runtime: Runtime) -> float:
    """Seconds one gradient spends in transcendental functions beyond what its flops charge
    them, for a runtime that prices them (``runtime.transcendental_factor``).

    ``census.transcendentals`` (evaluations, weighted in evaluations of ``exp``) times one
    ``exp``'s seconds as machine calibration timed it (a compiled loop's, 10 flops at
    ``cpu_flops``: :func:`pymc_accel.machine.compiled_exp`)
    times the runtime's factor, less what the flops count charged them beyond an ordinary
    flop (``census.transcendental_flops``) at the runtime's flop rate. It is compute that does
    not overlap with itself: it joins the arithmetic, and the two together race the memory
    stream.
    """
    c = profile.census
    exp_seconds = TRANSCENDENTAL_FLOPS / machine.cpu_flops[precision]
    counted = c.transcendental_flops / (runtime.flops_factor * machine.cpu_flops[precision])
    return max(0.0, c.transcendentals * exp_seconds * runtime.transcendental_factor - counted)


#: Flops per byte of its operands and output below which a dense linear algebra op is bound by
#: memory, not arithmetic: a matrix-vector product does 2 flops per 8-byte element read (0.25);
#: a 200 x 200 Cholesky about 8.
DENSE_COMPUTE_BOUND_INTENSITY = 1.0


def compute_bound_dense_flops(profile: ModelProfile) -> float:
    """Flops of the dense linear algebra ops whose arithmetic intensity (flops per byte of
    operands and output, float64) is at least :data:`DENSE_COMPUTE_BOUND_INTENSITY`: the dense
    work that runs at the dense rate. Matrix-vector products (a GLM's ``X @ beta`` and its
    gradient ``X.T @ r``) take the time of their bytes, which the roofline already streams:
    charging their flops at the dense rate as well had NumPyro's gradient of the Poisson GLM
    at 383 µs per leapfrog where it ran in 84 µs. An op with an unknown size counts as
    compute-bound."""
    c = profile.census
    ops = getattr(c, "dense_linalg_operands", None)
    if not ops:
        return c.flops_by_category["dense_linalg"]
    return sum(op.flops for op in ops if _memory_bound_elements(op) is None)


def memory_bound_dense_bytes(profile: ModelProfile, precision: str | None = None) -> float:
    """Bytes read and written by the dense linear algebra ops that memory bounds (below
    :data:`DENSE_COMPUTE_BOUND_INTENSITY`: matrix-vector products such as a GLM's ``X @ beta``
    and ``X.T @ r``), in ``precision`` (default: the model's). An op with an unknown size is
    counted as compute-bound (:func:`compute_bound_dense_flops`), not here."""
    ops = getattr(profile.census, "dense_linalg_operands", None) or []
    itemsize = 4.0 if (precision or profile.float_dtype) == "float32" else 8.0
    return sum(itemsize * elements for op in ops
               if (elements := _memory_bound_elements(op)) is not None)


def _memory_bound_elements(op) -> int | None:
    """Elements of a dense op's operands and output when it is bound by memory (arithmetic
    intensity below :data:`DENSE_COMPUTE_BOUND_INTENSITY` flops per float64 byte); ``None`` when
    it is compute-bound, has no elements, or has a dimension of unknown size."""
    shapes = [*op.operands, op.output]
    if any(d < 0 for s in shapes for d in s):
        return None
    elements = sum(math.prod(s) for s in shapes)
    if elements <= 0 or op.flops / (8.0 * elements) >= DENSE_COMPUTE_BOUND_INTENSITY:
        return None
    return elements


def bandwidth_sharing(
    profile: ModelProfile, machine: MachineFigures, runtime: Runtime, parallel_chains: int
) -> int:
    """How many chains share one chain's memory bandwidth: all of them when their working sets
    together spill out of the last-level cache (or the runtime threads each op over every
    core), none otherwise.

    Measured on the 2-core machine: two processes evaluating the numba gradient of the
    5,522-parameter seed model (a working set of about 1 MB, 10 MB of traffic per gradient)
    side by side took 142 and 145 µs each against 141 µs alone; the model divided the
    bandwidth by two and predicted 320 µs, so it ranked nutpie behind NumPyro where nutpie ran
    in half NumPyro's time (docs/benchmarks.md, regret benchmark).
    """
    chains = max(1, parallel_chains)
    if chains == 1 or runtime.threaded:
        return chains
    cache = getattr(machine, "cpu_cache_bytes", 0.0) or DEFAULT_CACHE_BYTES
    return 1 if profile.working_set_bytes * chains <= cache else chains


def driver_seconds(profile: ModelProfile, machine: MachineFigures, runtime: Runtime) -> float:
    """The driver's own work per gradient evaluation (call overhead, vector updates).

    The runtimes' figures were fitted on a machine whose PyTensor function call took
    :data:`REFERENCE_CALL_SECONDS`; they are scaled by this machine's measured call overhead
    (``machine.cpu_call_seconds``) when it has one, since both are interpreter and call work.
    """
    return _machine_scale(machine) * (runtime.per_gradient_seconds
                                      + runtime.per_dimension_seconds * profile.n_free)


def _machine_scale(machine: MachineFigures) -> float:
    """This machine's measured call overhead against the fit machine's: how much slower its
    fixed per-call and per-kernel work runs."""
    call = getattr(machine, "cpu_call_seconds", 0.0)
    if call > 0:
        return min(10.0, max(0.1, call / REFERENCE_CALL_SECONDS))
    return 1.0


#: The pure-Python loop of :func:`pymc_accel.machine.python_loop_seconds` on the machine every
#: fixed-seconds figure here was fitted on (the 2-core fit machine: numba's drivers on
#: 2026-11-23/24, NumPyro's scaled to that hour, first use on 2026-11-25): best of ten fresh
#: processes on 2026-11-26 at 11:42, 119.8-154.7 ms, median 125.9 ms
#: (bench/fit_process_speed.py, docs/results/fit-process-speed-cpu.json).
FIT_MACHINE_PYTHON_SECONDS = 0.1198
#: A start-up pace outside these bounds is taken as a bad timing, not as the machine.
START_UP_PACE_BOUNDS = (0.25, 4.0)


def start_up_pace(machine: MachineFigures) -> float:
    """How long this machine takes over start-up and compile work against the machine the fixed
    seconds were fitted on: its pure-Python loop (``machine.cpu_python_seconds``) over the fit
    machine's (:data:`FIT_MACHINE_PYTHON_SECONDS`); 1.0 where it was not timed.

    A run's fixed seconds are one core's interpreted and compile work (PyMC building the log
    density, PyTensor's rewrites, numba's and XLA's cached code loaded, imports), which the
    throughput figures do not time. On an AMD EPYC (2026-11-27) whose loop ran at 0.50x the
    fit machine's, the warm fixed seconds of 16 models ran at 0.56x the modelled for nutpie
    (0.40-0.79), 0.53x for PyMC's NUTS (0.41-0.64) and 0.51x for NumPyro (five models,
    0.48-0.53), and first use at 0.48x-0.70x (docs/benchmarks.md, "Start-up work at the
    machine's pace"); the run history's :func:`pymc_accel.history.machine_pace` corrects what
    is left once the machine has run other models.
    """
    loop = getattr(machine, "cpu_python_seconds", None)
    if not loop or loop <= 0:
        return 1.0
    low, high = START_UP_PACE_BOUNDS
    return min(high, max(low, loop / FIT_MACHINE_PYTHON_SECONDS))


def at_start_up_pace(estimate: Estimate, machine: MachineFigures, device: str) -> Estimate:
    """``estimate`` with its modelled start-up figures at this machine's pace
    (:func:`start_up_pace`): the fixed seconds and first use, and on the CPU the first compile
    (a GPU's was fitted on the GPU's own host). Measured and observed figures are kept as
    they are. The pace is kept in ``estimate.start_up_pace`` for the run history."""
    pace = start_up_pace(machine)
    if pace == 1.0:
        return estimate
    changes: dict[str, Any] = {"fixed_seconds": paced(estimate.fixed_seconds, pace),
                               "first_use_seconds": paced(estimate.first_use_seconds, pace),
                               "start_up_pace": pace}
    if device == "cpu":
        changes["cold_compile_seconds"] = paced(estimate.cold_compile_seconds, pace)
    return replace(estimate, **changes)


def paced(figure: Figure, pace: float) -> Figure:
    """A modelled start-up ``figure`` at ``pace`` (:func:`start_up_pace`), its note saying so;
    a measured or observed one, or nothing, as it is."""
    if pace == 1.0 or figure.source != "modelled" or figure.value <= 0:
        return figure
    return Figure(figure.value * pace, figure.source,
                  f"{figure.note}; x {pace:.2f}, this machine's start-up pace")


def measured_cpu_gradient_seconds(
    kernel_seconds: float,
    profile: ModelProfile,
    machine: MachineFigures,
    precision: str,
    runtime: Runtime,
    parallel_chains: int = 1,
    note: str = "",
) -> Figure:
    """Seconds per gradient from a measured single-chain evaluation, driver included.

    The measured kernel time (call overhead removed) is scaled by the modelled slow-down of
    ``parallel_chains`` chains sharing the CPU's memory bandwidth, and the runtime's driver
    work per gradient is added. A threaded runtime's kernel (XLA on the CPU) was timed alone
    with every core's thread to itself; chains side by side split the cores, so its time is
    multiplied by the chains running at once: on the 2-core machine NumPyro's two chains side
    by side took 3.4 and 10.6 ms per leapfrog (float32, float64) on the marginal GP, where one
    gradient timed alone took 1.9 and 4.3 ms (docs/results/fit-jax-cpu.jsonl).

    Parameters
    ----------
    kernel_seconds : float
        Measured seconds of one logp-and-gradient evaluation, call overhead removed.
    profile, machine, precision, runtime, parallel_chains
        As for :func:`cpu_gradient_seconds`.
    note : str
        How it was measured, for the report.

    Returns
    -------
    Figure
        Labelled ``measured``.
    """
    if runtime.threaded:
        seconds = kernel_seconds * max(1, parallel_chains)
    else:
        one = _cpu_roofline(profile, machine, precision, runtime, 1)
        shared = _cpu_roofline(profile, machine, precision, runtime, parallel_chains)
        seconds = kernel_seconds * (shared / one if one > 0 else 1.0)
    driver = driver_seconds(profile, machine, runtime)
    total = seconds + driver
    return Figure(total, "measured",
                  f"{note or f'{runtime.name}: timed gradient'}: {seconds * 1e6:.1f} µs timed "
                  f"+ {driver * 1e6:.1f} µs of driver (modelled)",
                  measured_share=seconds / total if total > 0 else 1.0)


def gradient_compile_seconds(profile: ModelProfile, runtime: Runtime,
                             cold_seconds: float = 0.0) -> float:
    """Modelled seconds to compile one logp-and-gradient function (not the whole sampler):
    what measured mode pays before it can time a candidate. For numba, ``cold_seconds`` is
    what compiling the model's kernels not yet in PyTensor's cache adds
    (:func:`cold_compile_seconds`, or what the run history leaves of it)."""
    profile = as_run_by(profile, runtime)
    if runtime.name.startswith("numba"):
        return (NUMBA_GRADIENT_COMPILE_SECONDS
                + NUMBA_GRADIENT_COMPILE_PER_KERNEL * profile.census.compiled_kernels
                + cold_seconds)
    return (JAX_GRADIENT_COMPILE_SECONDS
            + JAX_GRADIENT_COMPILE_PER_KERNEL * profile.census.compiled_kernels
            + xla_program_seconds(profile, "gradient_compile"))


def _gpu_launch_seconds(machine: MachineFigures | None) -> tuple[float, Any]:
    """The GPU's loop-iteration latency (calibrated where ``machine`` has a GPU, else a
    datacenter GPU's typical figure) and its :class:`~pymc_accel.machine.DeviceFigures`."""
    gpu = machine.accelerator("gpu") if machine is not None and hasattr(machine, "accelerator") else None
    return (gpu.launch_seconds if gpu is not None else GPU_LAUNCH_SECONDS), gpu


def _gpu_roofline_seconds(profile: ModelProfile, precision: str, gpu: Any) -> float:
    """Seconds one logp-and-gradient moves its bytes and does its arithmetic on a GPU."""
    c = profile.census
    if gpu is not None:
        dense = c.flops_by_category["dense_linalg"]
        return max(_precision_bytes(profile, precision) / gpu.bandwidth[precision],
                   (c.flops - dense) / gpu.flops[precision]) + dense / gpu.matmul_flops[precision]
    return max(_precision_bytes(profile, precision) / GPU_BANDWIDTH, c.flops / GPU_FLOPS[precision])


def gpu_gradient_seconds(
    profile: ModelProfile, precision: str, machine: MachineFigures | None = None
) -> Figure:
    """Modelled seconds of one logp-and-gradient evaluation on a GPU: launches plus roofline.

    XLA fuses elementwise chains; about a third of the graph's kernels survive as launches.
    With a calibrated GPU in ``machine`` (``machine.accelerator("gpu")``) its measured launch
    latency, bandwidth and throughput are used; otherwise a datacenter GPU's typical figures.
    A NUTS sampler compiled whole runs its gradients inside its loops, where a kernel costs a
    fraction of a launch: :func:`gpu_nuts_leapfrog_seconds`.
    """
    profile = as_run_by(profile)
    launches = max(1, profile.census.kernels // 3)
    launch, gpu = _gpu_launch_seconds(machine)
    seconds = launches * launch + _gpu_roofline_seconds(profile, precision, gpu)
    where = f"calibrated {gpu.kind}" if gpu is not None else "a datacenter GPU"
    return Figure(seconds, "modelled", f"{launches} launches + roofline of {where}")


def nuts_gpu_loop_seconds(machine: MachineFigures | None = None,
                          loop_iterations: float = NUTS_GPU_LOOP_ITERATIONS) -> float:
    """Seconds a gradient spends in its sampler's loops on a GPU beyond its own kernels:
    ``loop_iterations`` loop iterations (a NUTS leapfrog's :data:`NUTS_GPU_LOOP_ITERATIONS` by
    default) at the GPU's latency."""
    return loop_iterations * _gpu_launch_seconds(machine)[0]


def gpu_nuts_leapfrog_seconds(
    profile: ModelProfile, precision: str, machine: MachineFigures | None = None,
    scan_steps: int = 0, loop_iterations: float = NUTS_GPU_LOOP_ITERATIONS,
) -> Figure:
    """Modelled seconds of one gradient of a JAX sampler compiled whole on a GPU, a NUTS
    leapfrog of NumPyro's or BlackJAX's by default: its loops' ``loop_iterations``, the
    gradient's kernels queued inside one, and the gradient's roofline
    (:data:`NUTS_GPU_LOOP_ITERATIONS`, :data:`GPU_KERNEL_IN_LOOP_SHARE`). Each of the
    gradient's ``scan_steps`` sequential scan steps is a loop iteration of its own
    (:func:`pymc_accel.rewrites.apply.sequential_scan_steps`)."""
    kernels = profile.census.kernels
    launch, gpu = _gpu_launch_seconds(machine)
    iterations = loop_iterations + scan_steps + GPU_KERNEL_IN_LOOP_SHARE * kernels
    seconds = iterations * launch + _gpu_roofline_seconds(profile, precision, gpu)
    where = f"calibrated {gpu.kind}" if gpu is not None else "a datacenter GPU"
    scans = f" + {scan_steps} sequential scan steps" if scan_steps else ""
    return Figure(seconds, "modelled",
                  f"{loop_iterations:g} loop iterations{scans} + {kernels} kernels x "
                  f"{GPU_KERNEL_IN_LOOP_SHARE:.3f} of one, at {launch * 1e6:.1f} µs, + roofline of "
                  f"{where}")


def nuts_gradients_per_draw(profile: ModelProfile) -> Figure:
    """Leapfrog steps per draw of nutpie's NUTS (the reference every NUTS implementation is
    scaled from, :func:`nuts_trajectory`), modelled as growing with the fourth root of the dimension
    (step size of HMC shrinks as d^-1/4 for a fixed acceptance rate): ``3.4 d^(1/4)``.

    Fitted to the marginal leapfrogs per draw of nutpie between runs of 100 + 100 and
    400 + 400 draws on the zoo (``docs/results/fit-tuning-cpu.jsonl``): 4.7 at d = 3, 5.4 to
    6.6 at d = 10 to 21, 10 at 66, 15.6 at 612, 29.6 at 5,522; the earlier ``3 + 4 d^(1/4)``
    was 1.5 to 3.6 steps high at every size, which overstated every candidate's gradient work
    against its fixed costs.
    """
    steps = min(1023.0, max(3.0, 3.4 * profile.n_free**0.25))
    return Figure(steps, "modelled", "3.4 d^(1/4)")


#: Leapfrog steps per draw of a NUTS implementation against nutpie's on the same model, by the
#: adaptation it runs: nutpie's (gradient-based mass matrix), PyMC's, or Stan's windowed one
#: (NumPyro, BlackJAX). Geometric means of the sampling phase's leapfrogs per draw at
#: 500 + 500 draws on the quick zoo, 2 seeds (``bench/fit_trajectories.py``,
#: ``docs/results/fit-trajectories-cpu.jsonl``; the funnel left out, where one seed's trees
#: differ 2x). Per model the ratio runs from 1.0 to 1.8 (PyMC: 1.8 on the 612-parameter seed
#: model, where nutpie adapts a step size of 0.30 against 0.18) and 1.0 to 2.1 (Stan's); a
#: constant is what the graph can say. The regret benchmark's runs (15 model and length pairs
#: at 500 + 500 and 1000 + 1000 draws, 3 to 5 seeds each) give 1.11 and 1.42. Seven models no
#: figure was fitted on (``bench/zoo.py:held_out``, d = 7 to 503, 1000 + 1000 draws,
#: ``docs/results/fit-trajectories-heldout-cpu.jsonl``) give 1.16 and 1.31; per model Stan's
#: trees are nutpie's depth or one deeper (1.0-1.35x or 1.8-2.0x), at small and large d alike.
NUTS_TRAJECTORY_SCALE = {"nutpie": 1.0, "pymc": 1.16, "stan": 1.38}
#: Effective draws per *gradient* of a NUTS implementation against nutpie's, by adaptation.
#: The trajectory fit's two seeds put both at about 1 (PyMC's 1.02, Stan's 0.97, with a 2x
#: scatter per model); the regret benchmark's recorded runs, which hold each run's leapfrogs
#: per draw and minimum bulk ESS (``docs/results/regret-cpu-{500,500-all,1000-small,1000-seed}
#: .json``: 15 model and length pairs, 3 to 5 seeds each, the funnel left out), give PyMC's
#: NUTS 1.00 and NumPyro 0.84 (float64) and 0.86 (float32): Stan's adaptation takes 1.42x
#: nutpie's leapfrogs per draw and gets 1.20x its effective draws. With Stan's trees credited
#: whole, NumPyro's estimates, once their gradient times were right, chose it on pk_scan and
#: seed_small where it got 0.74 to 0.87 of nutpie's effective draws per draw
#: (``bench/fit_trajectory_efficiency.py``). The held-out models above give 0.98 and 0.85.
NUTS_GRADIENT_EFFICIENCY = {"nutpie": 1.0, "pymc": 1.0, "stan": 0.85}
#: Trees lengthened by a correlated posterior: where the selector evaluated the posterior's
#: conditioning at its mode (``profile.posterior_conditioning``, the spread of its correlation
#: scales: :mod:`pymc_accel.conditioning`), each NUTS's leapfrogs a draw are its priced ones
#: times ``(spread / CONDITIONING_KNEE)^c`` above the knee, ``c`` by its adaptation. Least
#: squares on the log of observed over priced leapfrogs a draw in the regret files at 1000 +
#: 1000 draws, 50 models (``JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python
#: bench/fit_tree_length.py --at mode``, docs/results/fit-tree-length-cpu-2026-12-02-spread.txt
#: and ``.jsonl``): rms log error, each model left out of its own fit, nutpie 0.56 -> 0.35,
#: PyMC's NUTS 0.77 -> 0.37, NumPyro's 0.86 -> 0.44 in float64 and 0.82 -> 0.38 in float32
#: (Stan's, their mean), where ``(cond(R) / 10)^c`` had 0.46, 0.51, 0.57 and 0.53. The knee was
#: chosen from 1 to 4 on the same models. The longer trees are priced as gradients only, each
#: implementation's effective draws a gradient against nutpie's kept
#: (:data:`NUTS_GRADIENT_EFFICIENCY`): on spline_20, NumPyro's 4.3x nutpie's leapfrogs a draw
#: bought it 1.5x nutpie's effective draws, not 4.3x
#: (docs/results/regret-cpu-1000-2026-11-30-seventh-families.md).
CONDITIONING_KNEE = 2.5
CONDITIONING_EXPONENT = {"nutpie": 0.615, "pymc": 0.912, "stan": 0.961}


def nuts_trajectory(profile: ModelProfile, adaptation: str) -> dict[str, Any]:
    """Leapfrog steps per draw of a NUTS implementation and its effective draws per draw
    relative to nutpie's, on this model.

    NUTS implementations adapt different step sizes and mass matrices to the same posterior,
    so their trees differ in length; the effective draws per *gradient* they get differ less
    (PyMC's NUTS as nutpie's; Stan's adaptation, NumPyro's, 0.85 of it:
    :data:`NUTS_GRADIENT_EFFICIENCY`). So an implementation whose trees are ``s`` times
    nutpie's and whose gradients buy ``g`` times nutpie's effective draws takes ``s`` times the
    gradients per draw and gets ``s * g`` times the effective draws per draw: its fixed costs
    are shared over ``s * g`` times the effective draws. Modelling
    every NUTS with nutpie's trees and effective draws, as before, made nutpie's 4 s compile
    look as cheap per effective draw as PyMC's 1.4 s on the 612-parameter seed model, where
    PyMC's NUTS takes 1.8x the leapfrogs per draw and gets 1.5x the effective draws (regret 1.33).

    On a centred hierarchy (:func:`pymc_accel.profile.centred_hierarchies`) every
    implementation gets nutpie's trees: the scales were fitted on posteriors without a funnel,
    and in the zoo's funnel PyMC's trees ran from 0.5x to 8x nutpie's between seeds (at
    1000 + 1000 draws its 1.16x credit chose it over nutpie, which was 3.5x faster to the
    same draws).

    Parameters
    ----------
    profile : ModelProfile
    adaptation : {"nutpie", "pymc", "stan"}
        The implementation's adaptation (:data:`NUTS_TRAJECTORY_SCALE`).

    Returns
    -------
    dict
        ``gradients_per_draw``, ``relative_efficiency`` and ``trajectory_scale``: fields of
        :class:`~pymc_accel.backend.Estimate`.
    """
    scale = NUTS_TRAJECTORY_SCALE[adaptation]
    per_gradient = NUTS_GRADIENT_EFFICIENCY[adaptation]
    base = nuts_gradients_per_draw(profile)
    if profile.centred_hierarchies:  # a funnel: trees set by the seed, not the adaptation
        steps, efficiency = base, Figure(1.0, "modelled", "centred hierarchy: nutpie's trees")
        scale = 1.0
    elif scale == 1.0:
        steps, efficiency = base, Figure(1.0, "modelled", "nutpie's NUTS: the reference")
    else:
        steps = Figure(min(1023.0, base.value * scale), "modelled",
                       f"{base.note} x {scale:g} ({adaptation} adaptation's trees against "
                       "nutpie's)")
        efficiency = Figure(scale * per_gradient, "modelled",
                            f"effective draws per gradient {per_gradient:g}x nutpie's, "
                            f"{scale * per_gradient:.2f}x its per draw")
    longer = conditioning_factor(profile, adaptation)
    if longer > 1.0:
        steps = Figure(min(1023.0, steps.value * longer), "modelled",
                       f"{steps.note} x {longer:.2f} (posterior conditioning "
                       f"{profile.posterior_conditioning:.3g})")
    return {"gradients_per_draw": steps, "relative_efficiency": efficiency,
            "trajectory_scale": scale}


def conditioning_factor(profile: ModelProfile, adaptation: str) -> float:
    """How many times its priced trees an implementation's are on a correlated posterior:
    ``(spread / CONDITIONING_KNEE)^c`` where the selector evaluated the conditioning above the
    knee (:data:`CONDITIONING_EXPONENT`), else 1. Not on a centred hierarchy, whose mode is its
    funnel's neck."""
    spread = profile.posterior_conditioning
    if spread is None or spread <= CONDITIONING_KNEE or profile.centred_hierarchies:
        return 1.0
    return (spread / CONDITIONING_KNEE) ** CONDITIONING_EXPONENT[adaptation]


def pymc_draw_start_gradients() -> Figure:
    """Gradients PyMC's NUTS spends per draw besides its leapfrogs: one, because every draw
    starts by evaluating the log density and gradient at the current point again
    (``integrator.compute_state``). Profiled on the marginal GP (N = 200, d = 3, 1.7 ms per
    gradient): 3,805 gradient calls for 3,405 leapfrog steps over 400 iterations; with about
    five leapfrogs per draw it is a sixth of the run."""
    return Figure(1.0, "modelled", "PyMC NUTS re-evaluates each draw's starting point")


def pymc_tuning_extra_gradients(profile: ModelProfile) -> Figure:
    """Gradients per chain PyMC's NUTS spends in its early tuning beyond what nutpie spends
    (deep trees while its step size and mass matrix are far from adapted), about
    ``3000 ln(d / 10)`` and at least 1,000, independent of the run's length.

    Fitted on the 2-core machine with every leapfrog counted (tuning included), 200 and 800
    iterations per chain, PyMC's NUTS against nutpie on the same models: eight schools (d = 10)
    about 0 more, Poisson GLM (21) 1.7k-1.9k, seed model at d = 66 4.7k-5.4k, d = 612 12k,
    d = 5,522 17k-21k (bench/fit_tuning.py). It decided the 5,522-parameter model, where
    PyMC's NUTS ran 28,100 leapfrogs per chain for 100 + 100 draws against nutpie's 6,691.
    The floor is from the small models of the zoo at 100 + 100 draws
    (docs/results/fit-tuning-cpu.jsonl): 1,087 more on the 3-parameter GP, 1,408 on the
    funnel (d = 10), 243 to 269 on the linear GLM and eight schools.
    """
    extra = max(1000.0, 3000.0 * math.log(max(1.0, profile.n_free / 10)))
    return Figure(extra, "modelled",
                  "PyMC NUTS early tuning: 3000 ln(d/10), at least 1000, gradients per chain")


#: Leapfrogs per chain that NumPyro's early tuning (Stan's windowed adaptation) spends beyond its
#: sampling phase's rate, per ``ln(d / 10)``: see :func:`stan_tuning_extra_gradients`.
STAN_TUNING_EXTRA_PER_LOG_DIMENSION = 1785.0


#: Leapfrogs per chain that NumPyro's early tuning spends beyond its sampling phase's rate, per
#: unit of the model's scale spread (:mod:`pymc_accel.curvature`): see
#: :func:`stan_tuning_extra_gradients`.
STAN_TUNING_EXTRA_PER_SPREAD = 450.0
#: Draws of Stan's schedule run with an identity mass matrix (its 75-draw initial buffer and
#: 25-draw first window), each at most NUTS's 1,023 leapfrogs (tree depth 10): what the
#: early tuning can spend at most.
STAN_IDENTITY_WINDOW_MOST_LEAPFROGS = 100 * 1023.0


def stan_tuning_extra_gradients(profile: ModelProfile) -> Figure:
    """Gradients per chain NumPyro's NUTS spends in its early tuning beyond its sampling
    phase's leapfrogs per draw, whatever the run's length: ``450`` times the model's scale
    spread where the selector evaluated it (``profile.scale_spread``), at most
    :data:`STAN_IDENTITY_WINDOW_MOST_LEAPFROGS`; otherwise ``1785 ln(d / 10)``.

    Stan's schedule, which NumPyro runs, tunes its first 100 draws with an identity mass
    matrix: the step size is then set by the stiffest direction and the trees must cross the
    widest, so those draws take leapfrogs in proportion to the ratio of the two scales
    (:mod:`pymc_accel.curvature`). Counted on 17 models (``bench/fit_numpyro_tuning.py
    --fit-spread docs/results/fit-numpyro-tuning-cpu-2026-11-27-fourteen.jsonl
    docs/results/fit-numpyro-tuning-cpu-2026-11-28-new-families.jsonl``): 12,000-37,000 extra
    leapfrogs a chain on the non-centred group models (spread 31-64), where the dimension's law
    prices 3,000-7,000; 3,300-6,800 on the seed models (spread 8.4-16.3); under 1,300 on
    regressions whose variables are alike (1.0-2.3). A run's leapfrogs, tuning and sampling,
    err by an rms log error of 0.19 with the spread against 0.38 with the dimension; the
    largest misses are pk_scan (7,500 extra at spread 4.7, 2,100 priced) and wide_202 (500 at
    9.5, 4,300 priced).

    The dimension's law, for a model whose spread was not evaluated (the selector evaluates it
    only where it could change the choice, :func:`pymc_accel.selection.select`):

    Counted with ``MCMC.warmup(collect_warmup=True)`` on the quick zoo's seven models (all but
    seed_large and the GP) in float64, at 200 + 200 and 2000 + 2000 draws
    (``bench/fit_numpyro_tuning.py``, ``docs/results/fit-numpyro-tuning-cpu-2026-11-25.jsonl``):
    6,074 extra on the 612-parameter seed model, 3,970 at d = 66, 2,104 at d = 21, 7,598 on
    pk_scan (d = 17), 269 at d = 12 and 636 and -3,541 at d = 10 (the funnel tunes with
    shallower trees than it samples with); least squares through zero, 1,785 ln(d / 10). Per
    model the figure strays by 2x and more either way: it is an average, not a model's.
    The figure before, 1,305 ln(d / 10), was fitted on runs that sampled 1/p (the fit script's
    log density had its sign flipped twice); their leapfrogs per draw were 13 on the seed
    model against 31 now, as the regret runs see. NumPyro's fixed cost and its cost per
    leapfrog were fitted on runs of 10 + 10 draws and on the marginal cost between two
    lengths, with tuning counted at the sampling rate (``bench/fit_numpyro_loop.py``):
    neither held these."""
    spread = profile.scale_spread
    if spread is not None:
        extra = min(STAN_TUNING_EXTRA_PER_SPREAD * spread, STAN_IDENTITY_WINDOW_MOST_LEAPFROGS)
        return Figure(extra, "modelled",
                      f"NumPyro early tuning: {STAN_TUNING_EXTRA_PER_SPREAD:.0f} x the scale "
                      f"spread {spread:.3g} at the initial point (identity mass matrix for 100 "
                      "draws), gradients per chain")
    extra = STAN_TUNING_EXTRA_PER_LOG_DIMENSION * math.log(max(1.0, profile.n_free / 10))
    return Figure(extra, "modelled",
                  f"NumPyro early tuning: {STAN_TUNING_EXTRA_PER_LOG_DIMENSION:.0f} ln(d/10) "
                  "gradients per chain")


def compile_seconds(profile: ModelProfile, runtime: Runtime) -> Figure:
    """Modelled fixed seconds of a run (compile and start-up) for this graph, with the compiled
    caches warm, in a process that has run the sampler before: what every run of a model after
    its first pays. A new process also pays the runtime's first use (:mod:`pymc_accel.first_use`,
    a separate figure of the estimate); the first run of a new model also compiles its kernels,
    which the regret benchmark reports separately as cold runs.

    A runtime with ``compile_seconds_by_rank`` is charged per kernel by the rank of the loops
    it compiles (``census.compiled_kernels_by_rank``): numba's compile time follows the code it
    generates, and a loop nest over a matrix is several times a vector loop's code, where a
    kernel count charges both alike (a model of 15 scalar variables, 342 kernels, compiled in
    half the seed model's time with its 216). On the census of what the runtime runs
    (:func:`as_run_by`), not of the kernels compiled (:func:`as_compiled_by`), which charges
    less: the second runs of the four models with gammainc's derivative in the shape took 0.73x
    to 1.76x of their estimates on it under nutpie and PyMC's NUTS
    (``docs/results/first-runs-numba-cpu-2026-12-01-series.txt``)."""
    profile = as_run_by(profile, runtime)
    c = profile.census
    ranks = getattr(c, "compiled_kernels_by_rank", None) or {}
    if runtime.compile_seconds_by_rank and sum(ranks.values()):
        seconds = runtime.compile_seconds + sum(
            w * ranks.get(r, 0) for w, r in zip(runtime.compile_seconds_by_rank, RANKS))
        note = f"{runtime.name}: fixed + compile by the kernels' loop ranks"
    else:
        seconds = runtime.compile_seconds + runtime.compile_seconds_per_kernel * c.compiled_kernels
        note = f"{runtime.name}: fixed + per-kernel compile"
    programs = _xla_program_compile(profile, runtime) + _numba_program_seconds(
        profile, runtime, cold=False)
    if programs:
        return Figure(seconds + programs, "modelled",
                      f"{note}, + {programs:.1f} s for {_program_ops_text(profile, runtime)}")
    return Figure(seconds, "modelled", note)


def _xla_program_compile(profile: ModelProfile, runtime: Runtime) -> float:
    """What :data:`XLA_PROGRAM_OPS` add to ``runtime``'s fixed seconds: a run whose programs are
    cached, or, for a runtime whose every run compiles (no ``cold_seconds``), that and the
    compile."""
    if not _on_xla(runtime):
        return 0.0
    cached = xla_program_seconds(profile, "cached")
    return cached if runtime.cold_seconds else cached + xla_program_seconds(profile, "cold")


def program_ops_listing(profile: ModelProfile) -> str:
    """The :data:`XLA_PROGRAM_OPS` ops the census found, e.g. ``120 Expm``."""
    return ", ".join(f"{n} {name}" for name, n in sorted(xla_program_ops(profile).items()))


def _program_ops_text(profile: ModelProfile, runtime: Runtime) -> str:
    """E.g. ``120 Expm (JAX compiles each as a program of its own)``."""
    how = ("JAX compiles each as a program of its own" if _on_xla(runtime)
           else "PyTensor compiles a numba function for each")
    return f"{program_ops_listing(profile)} ({how})"


#: What each ``Expm`` in the census adds to a numba driver's run whose kernels PyTensor's cache
#: holds, and to a model's first compile beyond that, in seconds at the fit machine's start-up
#: pace: ``(cached, cold)`` by runtime. PyTensor's numba matrix exponential is a function of its
#: own per node. Fitted on the Markov chains at 2 to 32 intervals (4 to 64 ops;
#: bench/fit_cold_compile.py, each candidate in a new process with an empty compile directory,
#: docs/results/fit-cold-compile-ctmc-cpu-2026-12-01.jsonl; bench/fit_xla_program_ops.py
#: --numba): per op, nutpie's cached runs 0.34 s and its first compile 0.59 s more, PyMC's
#: driver's 0.028 s and 0.59 s, at a pace of 0.67 (cached runs of 4.9-24.6 s under nutpie and
#: 0.8-2.5 s under PyMC's driver, first compiles 21-58 s beyond them). nutpie compiles a numba
#: function of the whole log density on every run, which grows with them; PyMC's driver loads
#: them from the cache. The first model with a matrix exponential on a machine also compiles
#: PyTensor's implementation once, about 20 s, which is not charged (it is the machine's, not
#: the model's).
NUMBA_PROGRAM_OPS: dict[str, dict[str, tuple[float, float]]] = {
    "Expm": {"numba+nutpie": (0.50, 0.87), "numba+pymc": (0.042, 0.87)},
}


def _numba_program_seconds(profile: ModelProfile, runtime: Runtime, cold: bool) -> float:
    """What :data:`NUMBA_PROGRAM_OPS` add to ``runtime``'s fixed seconds, or (``cold``) to its
    first compile; 0 for another runtime."""
    seconds = 0.0
    for name, count in xla_program_ops(profile).items():
        figures = NUMBA_PROGRAM_OPS.get(name, {}).get(runtime.name)
        if figures is not None:
            seconds += count * figures[1 if cold else 0]
    return seconds


def gpu_cold_compile_seconds(profile: ModelProfile) -> Figure:
    """Modelled seconds of the first compile of NumPyro's sampler for a GPU
    (:data:`GPU_COLD_SECONDS`, :data:`GPU_COLD_SECONDS_PER_KERNEL`): XLA's GPU compile of the
    whole sampler, about five to twelve times its CPU compile on the leased H200."""
    seconds = GPU_COLD_SECONDS + GPU_COLD_SECONDS_PER_KERNEL * profile.census.compiled_kernels
    return Figure(seconds, "modelled",
                  "not yet in the compile cache: XLA compiles the sampler for the GPU "
                  f"({GPU_COLD_SECONDS:.1f} s + {GPU_COLD_SECONDS_PER_KERNEL * 1e3:.0f} ms x "
                  f"{profile.census.compiled_kernels} kernels)")


def cold_compile_seconds(profile: ModelProfile, runtime: Runtime,
                         models_compiled_here: int = 0) -> Figure:
    """Modelled seconds a run pays beyond :func:`compile_seconds` when the model's kernels are
    not in the runtime's disk cache: the first run of a new or changed model on this machine
    (``bench/fit_cold_compile.py``; for JAX's sampler, the first run of its whole program,
    ``bench/fit_numpyro_fixed.py --jax-cache``). Zero for a runtime without a disk cache.

    ``models_compiled_here`` is how many other models the runtime's backend has run on this
    machine (:func:`pymc_accel.history.models_run_here`): from
    :data:`USED_MACHINE_MODELS` on, the kernels are priced by loop rank as on a machine that
    has compiled other models (``Runtime.cold_seconds_by_rank_used``), whose scalar kernels are
    mostly cached already. The kernels counted are those compiled (:func:`as_compiled_by`)."""
    profile = as_compiled_by(profile)
    ranks = profile.census.compiled_kernels_by_rank
    if (runtime.cold_seconds_by_rank_used and models_compiled_here >= USED_MACHINE_MODELS
            and any(ranks.values())):
        seconds = runtime.cold_seconds + sum(
            w * ranks.get(r, 0) for w, r in zip(runtime.cold_seconds_by_rank_used, RANKS))
        note = ("not yet in the compile cache: the model has not run on this machine with "
                f"this backend, which has compiled {models_compiled_here} others (loops "
                "priced by rank)")
    else:
        seconds = (runtime.cold_seconds
                   + runtime.cold_seconds_per_kernel * profile.census.compiled_kernels)
        note = ("not yet in the compile cache: the model has not run on this machine with "
                "this backend")
    if seconds <= 0:
        return Figure(0.0, "modelled", f"{runtime.name}: no compile cache on disk")
    programs = ((xla_program_seconds(profile, "cold") if _on_xla(runtime) else 0.0)
                + _numba_program_seconds(profile, runtime, cold=True))
    if programs:
        return Figure(seconds + programs, "modelled",
                      f"{note}; + {programs:.1f} s for {_program_ops_text(profile, runtime)}")
    return Figure(seconds, "modelled", note)


#: The float32 accuracy check (:func:`pymc_accel.precision.check_float32`): each kernel's Python
#: overhead in copying, linking and evaluating the log density and gradient the profile built,
#: and four evaluations that read the gradient's bytes. Fit to relative error on the quick zoo,
#: its shapes and two large hierarchical logistic regressions, 20 models, 3 repeats
#: (bench/fit_guard.py --big, docs/results/fit-guard-cpu-2026-11-27-as-written.jsonl): 14 ms
#: (the funnel) to 0.71 s (200,000 rows, 714 MB a gradient), each model left out estimated at
#: 0.67x-1.26x (rms log error 0.18). Every one of the 20 passed as written; a check that fails
#: as written goes on to the rewritten log density, which this does not charge (logistic_101
#: 46 ms and logistic_151 47, where the check as compiled only took 32 and 34:
#: fit-guard-cpu-2026-11-28-held-out-as-{written,compiled}.jsonl). Timed after it, the check as
#: compiled only (its form until 2026-11-27, 23:30; fit-guard-cpu-2026-11-27-as-compiled.jsonl)
#: took 1.05x-1.60x as long on nineteen of them (7.1 ms + 0.262 ms a kernel + 0.80 ms a MB), and
#: 0.92x on the 200,000-row model, whose graph as written is larger where the data are read;
#: 0.84x on lkj_20 (87 against 104 ms), whose gradient as written is twice the rewritten one.
#: Since the 200,000-row model goes straight to the check as compiled (past
#: precision.AS_WRITTEN_MAX_DATA_BYTES), the same runs fit -0.5 ms + 0.239 ms a kernel +
#: 0.94 ms a MB (rms log error 0.175; fit-guard-cpu-2026-11-28-default.jsonl, a slower hour:
#: glm_poisson 30 ms where 24), within the runs' noise of these figures, which stand.
#: A check kept from an earlier selection of the model (pymc_accel.check_store) costs nothing.
GUARD_SECONDS = 0.0009
GUARD_SECONDS_PER_KERNEL = 0.223e-3
GUARD_SECONDS_PER_BYTE = 0.849e-9
#: The check of a log density whose gradient PyTensor writes as scalar loops (the derivative of
#: ``gammainc`` or ``gammaincc`` in the shape, of ``betainc`` in its first two arguments) is
#: charged this many times the figure above: on eight of the nine such models timed (the
#: interval, copula, censored and truncated gamma models, all ``gammainc``) the check failed as
#: written and went on to the log density as the backends compile it, a second rewrite,
#: gradient, copy and evaluation. Charged once, their checks took 2.1x-2.4x the charge; twice,
#: 0.83x-0.95x on seven, 1.27x on the one that passed as written, and 0.26x on a truncated
#: gamma regression whose four points each step the loops (bench/fit_guard.py at cfb3ba3,
#: fit-guard-cpu-2026-12-01-repeated-nodes.jsonl in docs/results; docs/benchmarks.md, "The
#: float32 check charged twice where the gradient loops"). ``betainc``'s loops are charged
#: alike, untimed.
GUARD_LOOP_DERIVATIVE_PASSES = 2.0

#: The inputs of each series function whose derivative PyTensor writes as a scalar loop
#: (``census.series_evaluations`` keys ``"Name'i"``); its derivative in ``x`` is closed-form.
_LOOP_DERIVATIVES = ("GammaInc'0", "GammaIncC'0", "BetaInc'0", "BetaInc'1")


def guard_seconds(profile: ModelProfile) -> Figure:
    """Modelled seconds of the float32 accuracy check the selector runs before it chooses
    float32 for a float64 model: selection time, charged to float32 candidates when they are
    ranked (float32 is worth its check only where it saves more than the check costs).
    A gradient with PyTensor's scalar loops is charged :data:`GUARD_LOOP_DERIVATIVE_PASSES`
    passes, the check as written and as compiled."""
    c = profile.census
    seconds = GUARD_SECONDS + GUARD_SECONDS_PER_KERNEL * c.kernels + GUARD_SECONDS_PER_BYTE * c.bytes
    if any(c.series_evaluations.get(key) for key in _LOOP_DERIVATIVES):
        return Figure(seconds * GUARD_LOOP_DERIVATIVE_PASSES, "modelled",
                      "float32 accuracy check: fixed + per kernel + per byte, as written and "
                      "as compiled (the gradient's scalar loops)")
    return Figure(seconds, "modelled", "float32 accuracy check: fixed + per kernel + per byte")


def state_memory_bytes(profile: ModelProfile, precision: str, chains: int, draws: int) -> Figure:
    """Device memory: data and graph intermediates once, plus per-chain state and stored draws."""
    itemsize = 4 if precision == "float32" else 8
    per_chain = profile.n_free * itemsize * (8 + draws)
    return Figure(_precision_bytes(profile, precision) + chains * per_chain, "modelled")
