"""A first selection with a GP kernel's coinciding distances held by the profile, beside the same
selection with the hold left to the float32 check, side by side in one process.

Since 2026-12-02 the profile holds the distances every JAX run holds
(:func:`pymc_accel.profile.held_log_density`) before it takes PyTensor's gradient, and the
float32 check evaluates that gradient; before, the check held them and took the gradient of the
held log density a second time. ``pymc_accel.profile.HOLD_DISTANCES`` switches between the two.
For each model and repeat, both ways run on models built afresh, in alternating order, with the
run history empty and no profile or check kept (``PYMC_ACCEL_PROFILE_CACHE=off``), after a
primer selection has paid the process's one-off costs. Printed: medians of the whole selection
and of its profile and float32 check, the choice and the check's verdict each way, as Markdown:

    JAX_PLATFORMS=cpu python bench/time_profile_hold.py --models seasonal_gp_6,sparse_gp
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from time_selection_parts import _timed  # noqa: E402

WAYS = ("check holds", "profile holds")


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="seasonal_gp_6,gp_marginal,sparse_gp")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    return args


def _verdict(report) -> str:
    check = report.precision_check
    if not check:
        return "not run"
    verdict = "safe" if check.get("safe") else "refused"
    return f"{verdict} (grad {check.get('grad_rel_error', float('nan')):.2g})"


def main(argv=None) -> str:
    """Time both ways; return the Markdown table."""
    args = _parse(argv)
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    os.environ["PYMC_ACCEL_FIRST_USE"] = "off"
    warnings.filterwarnings("ignore")
    from bench_regret import private_history
    from compare_evaluator import models as every_model

    import pymc_accel
    from pymc_accel import profile, selection
    from pymc_accel.selection import forget_profiles

    models = every_model()  # the zoo's, the held-out sets' and the user sweep's
    seconds: dict[str, float] = {}
    _timed(selection, "_cached_profile_and_logp", seconds)
    _timed(selection, "check_float32", seconds)
    lines = [f"Command: `JAX_PLATFORMS=cpu python bench/time_profile_hold.py "
             f"{' '.join(argv if argv is not None else sys.argv[1:])}`", "",
             "| model | held | chosen | float32 check | selection, check holds | "
             "selection, profile holds | ratio | profile | float32 check (ms) |",
             "|---|---|---|---|---|---|---|---|---|"]
    saved = profile.HOLD_DISTANCES
    try:
        with private_history():
            pymc_accel.select(models["eight_schools"]())  # the process's one-off costs
            for name in args.models.split(","):
                runs = {way: [] for way in WAYS}
                chosen, verdicts, held = {}, {}, 0
                for repeat in range(args.repeats):
                    order = WAYS if repeat % 2 == 0 else WAYS[::-1]
                    for way in order:
                        profile.HOLD_DISTANCES = way == "profile holds"
                        forget_profiles()
                        model = models[name]()
                        gc.collect()
                        seconds.clear()
                        start = time.perf_counter()
                        report = pymc_accel.select(model, draws=1000, tune=1000, chains=2)
                        whole = time.perf_counter() - start
                        runs[way].append((whole, seconds.get("_cached_profile_and_logp", 0.0),
                                          seconds.get("check_float32", 0.0)))
                        chosen.setdefault(way, set()).add(report.chosen)
                        verdicts.setdefault(way, set()).add(_verdict(report))
                        if way == "profile holds":
                            held = _held_elements(model)
                med = {way: [statistics.median(r[i] for r in runs[way]) * 1e3 for i in range(3)]
                       for way in WAYS}
                before, after = med[WAYS[0]], med[WAYS[1]]

                def both(values: dict) -> str:
                    texts = [", ".join(sorted(values[w])) for w in WAYS]
                    return texts[0] if texts[0] == texts[1] else " / ".join(texts)

                lines.append(
                    f"| {name} | {held} | {both(chosen)} | {both(verdicts)} | {before[0]:.0f} | "
                    f"{after[0]:.0f} | {after[0] / before[0]:.2f} | {before[1]:.0f} → "
                    f"{after[1]:.0f} | {before[2]:.0f} → {after[2]:.0f} |")
    finally:
        profile.HOLD_DISTANCES = saved
    return "\n".join(lines) + (
        "\n\nMilliseconds, medians of fresh models, both ways alternating in one process; "
        "held: elements of the kernel distances held at zero; ratio: profile holds ÷ check "
        "holds.\n")


def _held_elements(model) -> int:
    """Elements of ``model``'s kernel distances a JAX run holds at zero."""
    from pymc_accel.backends.run_logp import judging_points
    from pymc_accel.rewrites.coincident_distances import zeroed_coincident_distances

    logp = model.logp()
    return zeroed_coincident_distances([logp], list(model.value_vars), judging_points(model))[1]


if __name__ == "__main__":
    print(main())
