"""pymc-accel's XLA tuning (``pymc_accel.xla_tuning``: CPU reductions left to XLA's own loops,
not YNNPACK's) against XLA's defaults, side by side: a model's JAX gradient and NumPyro's
leapfrog, each setting in new processes, in alternating order over ``--rounds`` rounds.

Each round runs ``bench/time_gradient_devices.py`` (the gradient in a compiled loop, on one XLA
CPU device and on each of two side by side) and ``bench/fit_numpyro_leapfrog.py`` (NumPyro's
whole leapfrog, two chains in its compiled loop) once with ``PYMC_ACCEL_XLA_TUNING`` on and
once off, the first of the two alternating between rounds, so a drift of the machine's speed
falls on both. Medians over the rounds, in µs, and their ratio default / tuned (above 1: the
tuning is faster), as a Markdown table; every timing in ``--out``:

    JAX_PLATFORMS=cpu python bench/compare_xla_tuning.py --models seed_mid,ordinal_9,lkj_20 \\
        --rounds 3 --out docs/results/xla-tuning-cpu.json --markdown docs/results/xla-tuning-cpu.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).parent

_GRADIENT = """
import json, os, sys
sys.path.insert(0, {bench!r})
import time_gradient_devices
rows = time_gradient_devices.main({argv!r})
print("RESULT " + json.dumps({{"rows": rows, "xla_flags": os.environ.get("XLA_FLAGS", "")}}))
"""

_LEAPFROG = """
import json, os, sys
sys.path.insert(0, {bench!r})
import fit_numpyro_leapfrog
fit_numpyro_leapfrog.main({argv!r})
print("RESULT " + json.dumps({{"xla_flags": os.environ.get("XLA_FLAGS", "")}}))
"""

SETTINGS = ("on", "off")


def _run(code: str, setting: str) -> tuple[list[str], dict]:
    """Run ``code`` in a new Python with the tuning switch at ``setting``: its stdout lines and
    the JSON it printed after ``RESULT``."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["PYMC_ACCEL_XLA_TUNING"] = setting
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"a {setting} run failed:\n{run.stderr[-3000:]}")
    lines = run.stdout.splitlines()
    result = next(json.loads(line[7:]) for line in reversed(lines) if line.startswith("RESULT "))
    return lines, result


def gradient_round(models: str, precisions: str, passes: int, setting: str) -> dict:
    """µs a gradient on one device and on two, per (model, precision), with ``setting``."""
    argv = ["--models", models, "--precisions", precisions, "--logp", "run",
            "--passes", str(passes)]
    _, result = _run(_GRADIENT.format(bench=str(BENCH), argv=argv), setting)
    return {"xla_flags": result["xla_flags"],
            "timings": {f"{r['model']} {r['precision']}": {"one_device": r["one_device"] * 1e6,
                                                           "two_devices": r["two_devices"] * 1e6}
                        for r in result["rows"]}}


def leapfrog_round(models: str, precisions: str, setting: str) -> dict:
    """µs a NumPyro leapfrog of two chains side by side, per (model, precision)."""
    sys.path.insert(0, str(BENCH))
    from fit_numpyro_leapfrog import per_leapfrog

    argv = ["--models", models, "--precisions", precisions]
    lines, result = _run(_LEAPFROG.format(bench=str(BENCH), argv=argv), setting)
    timings = {}
    for line in lines:
        if line.startswith("{"):
            row = json.loads(line)
            if "error" not in row:
                timings[f"{row['model']} {row['precision']}"] = {
                    "leapfrog": per_leapfrog(row) * 1e6}
    return {"xla_flags": result["xla_flags"], "timings": timings}


def summary(rounds: list[dict]) -> list[dict]:
    """Per (model, precision, measure): the median µs of each setting and default / tuned."""
    rows = []
    keys = rounds[0]["on"]["timings"]
    for key in keys:
        for measure in rounds[0]["on"]["timings"][key]:
            medians = {s: statistics.median(r[s]["timings"][key][measure] for r in rounds)
                       for s in SETTINGS}
            model, precision = key.split()
            rows.append({"model": model, "precision": precision, "measure": measure,
                         "tuned": medians["on"], "default": medians["off"],
                         "default_over_tuned": medians["off"] / medians["on"],
                         "tuned_runs": [r["on"]["timings"][key][measure] for r in rounds],
                         "default_runs": [r["off"]["timings"][key][measure] for r in rounds]})
    return rows


def markdown(result: dict) -> str:
    out = [f"Command: `{result['command']}`; {result['rounds']} rounds, each setting in new "
           f"processes, alternating which ran first; tuned: XLA_FLAGS "
           f"`{result['tuned_flags']}`; default: `{result['default_flags']}`; "
           f"{result['seconds'] / 60:.0f} min.", "",
           "| model | precision | measure | default (µs) | tuned (µs) | default / tuned "
           "| default runs | tuned runs |", "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        runs = {s: " / ".join(f"{v:.1f}" for v in r[f"{s}_runs"]) for s in ("default", "tuned")}
        out.append(f"| {r['model']} | {r['precision']} | {r['measure']} | {r['default']:.1f} "
                   f"| {r['tuned']:.1f} | {r['default_over_tuned']:.2f} | {runs['default']} "
                   f"| {runs['tuned']} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="seed_mid,ordinal_9,lkj_20")
    p.add_argument("--precisions", default="float64,float32")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--passes", type=int, default=1000)
    p.add_argument("--what", default="gradient,leapfrog",
                   help="gradient, leapfrog or both, comma-separated")
    p.add_argument("--out", default="")
    p.add_argument("--markdown", default="")
    args = p.parse_args(argv)
    what = set(args.what.split(","))
    start = time.perf_counter()
    rounds = []
    for i in range(args.rounds):
        order = SETTINGS if i % 2 == 0 else SETTINGS[::-1]
        results: dict = {s: {"xla_flags": "", "timings": {}} for s in SETTINGS}
        for setting in order:
            for part in sorted(what):
                got = (gradient_round(args.models, args.precisions, args.passes, setting)
                       if part == "gradient" else
                       leapfrog_round(args.models, args.precisions, setting))
                results[setting]["xla_flags"] = got["xla_flags"]
                for key, timing in got["timings"].items():
                    results[setting]["timings"].setdefault(key, {}).update(timing)
                print(f"round {i + 1}, {part}, tuning {setting}: "
                      f"{json.dumps(got['timings'])}", file=sys.stderr, flush=True)
        rounds.append(results)
    result = {"command": "python bench/compare_xla_tuning.py "
                         + " ".join(argv if argv is not None else sys.argv[1:]),
              "rounds": args.rounds, "seconds": time.perf_counter() - start,
              "tuned_flags": rounds[0]["on"]["xla_flags"],
              "default_flags": rounds[0]["off"]["xla_flags"],
              "raw": rounds, "rows": summary(rounds)}
    text = markdown(result)
    print(text)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    if args.markdown:
        Path(args.markdown).write_text(text)
    return result


if __name__ == "__main__":
    main()
