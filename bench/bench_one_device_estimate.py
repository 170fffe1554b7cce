"""A JAX sampler's CPU estimate where JAX has one CPU device, against its runs.

JAX has one CPU device when it started before pymc-accel could ask XLA for one per core (a
notebook that used JAX first). NumPyro's chains then run one after another
(``runnable_chain_method``), where with a device a core they run side by side. Each layout
here runs in a fresh process with XLA's host device count set. It takes the selection's
estimate for ``--backend``'s CPU float64 candidate, laid out for the run by the backend's
``fit_memory`` as the selection lays it out (PyMC's BlackJAX path vectorizes the chains where
JAX has fewer CPU devices than chains), then runs it ``--repeats`` times with ``--draws`` +
``--draws`` draws. The table sets each layout's later runs (JAX's
programs cached: the estimate's fixed seconds and sampling, no compile) against its estimate,
and the one-device layout's against the side-by-side layout's:

    JAX_PLATFORMS=cpu python bench/bench_one_device_estimate.py --models seed_mid,glm_poisson
    JAX_PLATFORMS=cpu python bench/bench_one_device_estimate.py --backend blackjax_nuts
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_cpu_chain_layout import run_with_cpu_devices  # noqa: E402

_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, "bench")
os.environ["PYMC_ACCEL_HISTORY"] = "off"
from zoo import zoo, held_out
from pymc_accel.backend import Candidate, SampleRequest
from pymc_accel.machine import machine_figures
from pymc_accel.profile import profile_model
from pymc_accel.devices import discover
from pymc_accel.registry import get_registry
name, chains, draws, repeats, backend_name = json.loads(sys.argv[1])
factory = (zoo(quick=True) | held_out())[name]
backend = get_registry().backends[backend_name]
profile = profile_model(factory())
# the backend's own CPU float64 candidate (NumPyro's and BlackJAX's: chain_method="parallel")
unlaid = next(c for c in backend.candidates(profile, discover())
              if isinstance(c, Candidate) and c.device == "cpu" and c.precision == "float64")
fit = getattr(backend, "fit_memory", None)  # the run's chain layout, as the selection makes it
candidate = unlaid
if fit is not None:
    candidate, _ = fit(unlaid, profile, discover(),
                       SampleRequest(draws=draws, tune=draws, chains=chains))
from pymc_accel.costmodel import at_start_up_pace
machine = machine_figures()  # the estimate as the selection makes it, start-up at the pace
estimate = at_start_up_pace(backend.estimate(candidate, profile, machine), machine, "cpu")
# the same candidate left in NumPyro's layout (its chains in rounds of one a device)
in_rounds = at_start_up_pace(backend.estimate(unlaid, profile, machine), machine, "cpu")
walls = []
for i in range(repeats):
    t = time.perf_counter()
    backend.sample(factory(), candidate, SampleRequest(draws=draws, tune=draws, chains=chains,
                   cores=chains, random_seed=i + 1, progressbar=False))
    walls.append(time.perf_counter() - t)
import jax
print(json.dumps({"walls": walls, "jax_cpu_devices": len(jax.devices("cpu")),
                  "candidate": candidate.label,
                  "chain_parallelism": estimate.chain_parallelism,
                  "fixed": estimate.fixed_seconds.value,
                  "sampling": estimate.sampling_seconds(2 * draws, chains),
                  "estimate_in_rounds": in_rounds.fixed_seconds.value
                                        + in_rounds.sampling_seconds(2 * draws, chains)}))
"""


def run_layout(name: str, devices: int, chains: int, draws: int, repeats: int,
               backend: str = "numpyro") -> dict:
    """The estimate and the walls of ``repeats`` runs of ``backend`` in one fresh process with
    ``devices`` CPU devices."""
    return run_with_cpu_devices(_CHILD, [name, chains, draws, repeats, backend], devices)


def table(rows: list[dict]) -> list[str]:
    """A Markdown table: each layout's later runs against its estimate (fixed seconds and
    sampling), and the one-device layout's runs and estimate against the side-by-side one's."""
    out = ["| model | CPU devices | chains | candidate | chains at a time (estimate) | "
           "estimate (s) | later runs, median (s) | run / estimate | run / estimate in rounds | "
           "runs, against side by side | estimates, against side by side |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    base = {}
    for r in sorted(rows, key=lambda r: (r["model"], -r["devices"])):
        later = statistics.median(r["walls"][1:])
        estimate = r["fixed"] + r["sampling"]
        base.setdefault(r["model"], (later, estimate))
        run0, est0 = base[r["model"]]
        rounds = r.get("estimate_in_rounds", estimate)
        out.append(f"| {r['model']} | {r['jax_cpu_devices']} | {r['chains']} | "
                   f"{r.get('candidate', '')} | {r['chain_parallelism']} | {estimate:.2f} | "
                   f"{later:.2f} | {later / estimate:.2f} | {later / rounds:.2f} | "
                   f"{later / run0:.2f} | {estimate / est0:.2f} |")
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="seed_mid,glm_poisson")
    p.add_argument("--draws", type=int, default=500)
    p.add_argument("--repeats", type=int, default=4)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--backend", default="numpyro",
                   help="a registered JAX NUTS backend: numpyro, blackjax_nuts")
    p.add_argument("--out", default=None, help="also write the rows as JSON here")
    args = p.parse_args(argv)
    rows = []
    for name in args.models.split(","):
        for devices in (args.chains, 1):
            row = run_layout(name, devices, args.chains, args.draws, args.repeats, args.backend)
            rows.append({"model": name, "backend": args.backend, "devices": devices,
                         "chains": args.chains, **row})
            print(json.dumps(rows[-1]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
