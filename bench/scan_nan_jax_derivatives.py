"""Which models' log densities have a JAX derivative that can be NaN where PyTensor's gradient is
finite, as the profile finds them (``ModelProfile.nan_jax_gradient_ops``: PyMC's normal log-CDF,
and a root or power in a switch's branch whose argument is outside its domain at the start), and
what the walk for the switches' branches costs (``jax_support._switched_domain_arguments``,
fastest of five).

Over every model of the user sweep, the quick zoo, the held-out models and the dense shapes; a
check that the switch rule names the models it should and no others (PyMC's LKJ prior takes
roots inside switches too), not a benchmark of speed.

    JAX_PLATFORMS=cpu PYMC_ACCEL_PROFILE_CACHE=off python bench/scan_nan_jax_derivatives.py
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main() -> int:
    warnings.filterwarnings("ignore")
    os.environ["PYMC_ACCEL_PROFILE_CACHE"] = "off"
    import pymc as pm

    import sweep_user_models
    import zoo
    from pymc_accel.jax_support import _switched_domain_arguments
    from pymc_accel.profile import log_density_graph, profile_model

    models = {f.__name__: (lambda f=f: f(pm)) for f in sweep_user_models.MODELS}
    models.update(zoo.zoo(quick=True))
    models.update(zoo.held_out())
    models.update(zoo.dense_shapes())
    walks, failed = [], []
    for name, make in models.items():
        try:
            found = profile_model(make()).nan_jax_gradient_ops
            graph, _ = log_density_graph(make())
            seconds = []
            for _ in range(5):
                start = time.perf_counter()
                _switched_domain_arguments([graph.logp], list(graph.value_vars))
                seconds.append(time.perf_counter() - start)
            walks.append(min(seconds))
        except Exception as exc:  # a model the profile refuses (discrete, no gradient...)
            failed.append(f"{name} ({type(exc).__name__})")
            continue
        if found:
            print(f"{name}: {', '.join(found)}")
    print(f"{len(walks)} models profiled; the walk for switches' branches took "
          f"{min(walks) * 1e3:.2f}-{max(walks) * 1e3:.2f} ms (median "
          f"{sorted(walks)[len(walks) // 2] * 1e3:.2f} ms)")
    if failed:
        print(f"not profiled: {', '.join(failed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
