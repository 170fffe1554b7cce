"""Chains over several devices: tested on CPU with XLA's forced host device count, in a fresh
process (the flag must be set before JAX starts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import pymc_accel
from pymc_accel.backends.chains import layout
from pymc_accel.backends.numpyro_nuts import numpyro_chain_method


def test_layout_splits_chains_over_devices_with_least_padding():
    assert layout(8, 4, 8) == (4, 1, 2)  # two chains vectorized on each of four devices
    assert layout(8, 4, 1) == (4, 2, 1)  # one at a time: two rounds per device
    assert layout(4, 1, 3) == (1, 2, 2)  # three at once would pad to six; two rounds of two
    assert layout(2, 4, 2) == (2, 1, 1)  # never more devices than chains
    with pytest.raises(ValueError, match=">= 1"):
        layout(4, 0, 1)


def test_one_device_keeps_numpyros_own_methods():
    assert numpyro_chain_method("vectorized", platform="cpu", chains=4) == "vectorized"
    assert numpyro_chain_method("sequential", platform="cpu", chains=4) == "sequential"
    assert callable(numpyro_chain_method("sequential", platform="cpu", chains=4,
                                         chains_at_once=2))
    with pytest.raises(ValueError, match="chain_method must be"):
        numpyro_chain_method("pmap", platform="cpu", chains=4)


def _run(code: str, devices: int = 4) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
               PYMC_ACCEL_DISABLE_PLUGIN_AUTOLOAD="1")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# Records the devices every pmap is asked to use and where its results live.
SPY = """
import json, jax
import numpy as np
used = []
_pmap = jax.pmap
def spy(fn, *a, **kw):
    mapped = _pmap(fn, *a, **kw)
    def call(*args):
        out = mapped(*args)
        leaf = jax.tree.leaves(out)[0]
        used.append(sorted(d.id for d in leaf.sharding.device_set))
        return out
    return call
jax.pmap = spy
"""


def test_chain_map_runs_groups_of_chains_on_every_device():
    result = _run(SPY + """
from pymc_accel.backends.chains import chain_map
def one_chain(args):
    key, x = args
    return x * 2.0 + jax.random.uniform(key) * 0.0, jax.numpy.sum(x)
keys = jax.random.split(jax.random.PRNGKey(0), 10)
xs = jax.numpy.arange(30.0).reshape(10, 3)
doubled, sums = chain_map(jax.devices("cpu"), 8)(one_chain)((keys, xs))
streamed, _ = chain_map(jax.devices("cpu"), 1, draws_to_host=True)(one_chain)((keys, xs))
print(json.dumps({"devices": jax.device_count(), "used": used,
                  "ok": bool(np.allclose(doubled, xs * 2) and np.allclose(sums, xs.sum(1))),
                  "streamed_ok": bool(np.allclose(streamed, xs * 2)),
                  "streamed_type": type(streamed).__name__}))
""")
    assert result["devices"] == 4
    assert result["used"][0] == [0, 1, 2, 3]  # ten chains: three per device, padded to twelve
    assert len(result["used"]) == 1 + 3  # then one chain at a time: three rounds of four
    assert result["ok"] and result["streamed_ok"] and result["streamed_type"] == "ndarray"


def test_numpyro_spreads_more_chains_than_devices_over_all_of_them():
    """Eight chains on four CPU devices: two rounds of one chain per device (a CPU does not
    vectorize chains: vmapped NUTS ran 1.9x slower there), every device used in each round, and
    the posterior of a conjugate model right."""
    result = _run(SPY + """
import pymc_accel
from pymc_accel.backend import Candidate, SampleRequest
from pymc_accel.backends.numpyro_nuts import NumpyroBackend
from pymc_accel.models import conjugate_normal
ref = conjugate_normal()
c = Candidate("numpyro", "cpu", "float64", (("chain_method", "parallel"),))
idata = NumpyroBackend().sample(ref.model, c, SampleRequest(
    draws=300, tune=300, chains=8, random_seed=3, progressbar=False, quiet=True,
    compute_convergence_checks=False))
mu = idata.posterior["mu"]
print(json.dumps({"used": used, "chains": int(mu.sizes["chain"]),
                  "mean": float(mu.mean()), "sd": float(mu.std()),
                  "chain_means": [float(m) for m in mu.mean("draw")],
                  "post_mean": ref.post_mean, "post_sd": ref.post_sd}))
""")
    # two rounds of one chain a device (vectorized pairs would be one call)
    assert len(result["used"]) == 2 and all(u == [0, 1, 2, 3] for u in result["used"])
    assert result["chains"] == 8
    assert len(set(round(m, 6) for m in result["chain_means"])) == 8  # eight distinct chains
    se = result["post_sd"] / (8 * 300 / 4) ** 0.5  # MC error with a generous ESS discount
    assert abs(result["mean"] - result["post_mean"]) < 4 * se
    assert result["sd"] == pytest.approx(result["post_sd"], rel=0.15)


def test_draws_streamed_to_the_host_one_chain_at_a_time():
    """The layout a GPU short of memory gets: one chain at a time, draws moved to the host
    after each; the result is an ordinary, correct posterior."""
    from pymc_accel.backend import Candidate, SampleRequest
    from pymc_accel.backends.numpyro_nuts import NumpyroBackend
    from pymc_accel.models import conjugate_normal

    ref = conjugate_normal()
    c = Candidate("numpyro", "cpu", "float64", (
        ("chain_method", "sequential"), ("chains_at_once", 1), ("draws_to_host", True)))
    idata = NumpyroBackend().sample(ref.model, c, SampleRequest(
        draws=300, tune=300, chains=2, random_seed=5, progressbar=False, quiet=True,
        compute_convergence_checks=False))
    mu = idata.posterior["mu"]
    assert mu.sizes["chain"] == 2 and mu.sizes["draw"] == 300
    assert float(mu.sel(chain=0).mean()) != float(mu.sel(chain=1).mean())
    assert abs(float(mu.mean()) - ref.post_mean) < 4 * ref.post_sd / (600 / 4) ** 0.5
    assert set(idata.sample_stats) >= {"diverging", "step_size", "lp"}
    # NumPyro's last state kept through the custom chain map: both chains' gradients checked
    assert pymc_accel.LastGradients.from_idata(idata).chains == [0, 1]


def test_a_device_with_one_chain_runs_it_without_vmap(monkeypatch):
    """A device's lone chain is not batched: vmap's batching of NUTS's nested while loops made
    a short NumPyro run's trace 10-20x slower (the layout of a CPU run on a GPU machine). Two
    chains at once on a device are still vectorized."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from pymc_accel.backends.chains import chain_map

    batched = []
    vmap = jax.vmap
    monkeypatch.setattr(jax, "vmap", lambda fn, *a, **kw: batched.append(fn) or vmap(fn, *a, **kw))

    def one_chain(x):
        halve = jax.lax.while_loop(lambda v: jnp.sum(v) > 1.0, lambda v: v * 0.5, x)
        return halve, jnp.sum(x)

    xs = jnp.arange(1.0, 7.0).reshape(2, 3)
    halved, sums = chain_map(jax.devices("cpu")[:1], 1)(one_chain)(xs)
    assert batched == []
    assert np.allclose(sums, xs.sum(1))
    for row, out in zip(np.asarray(xs), np.asarray(halved)):
        assert out.sum() <= 1.0 and np.allclose(out / row, out[0] / row[0])
    together, _ = chain_map(jax.devices("cpu")[:1], 2)(one_chain)(xs)
    assert len(batched) == 1
    assert np.allclose(together, halved)


def test_a_cpu_run_on_a_gpu_machine_maps_its_chains_unbatched():
    """Where JAX's default backend is a GPU, NumPyro's own "parallel" would map over the GPU, so
    a CPU candidate's chains go through the chain map, one a CPU device and not vmapped: on the
    H200 host its vmap made each run trace for 1.3-1.6 s."""
    result = _run(SPY + """
import jax.numpy as jnp
from pymc_accel.backends.numpyro_nuts import numpyro_chain_method
jax.default_backend = lambda: "gpu"  # as on a machine with a GPU
method = numpyro_chain_method("parallel", platform="cpu", chains=2)
batched = []
_vmap = jax.vmap
jax.vmap = lambda fn, *a, **kw: batched.append(fn) or _vmap(fn, *a, **kw)
out = method(lambda x: x * 2.0)(jnp.arange(6.0).reshape(2, 3))
print(json.dumps({"callable": callable(method), "batched": len(batched), "used": used,
                  "ok": bool(np.allclose(out, np.arange(6.0).reshape(2, 3) * 2.0))}))
""")
    assert result["callable"] and result["ok"]
    assert result["batched"] == 0
    assert result["used"] == [[0, 1]]  # one chain on each of two CPU devices


def test_chains_on_one_cpu_device_run_one_after_another():
    """JAX started before pymc-accel has one CPU device: a run's chains go one after another
    there, not vectorized (seed_mid's two chains: 4.1 s against 7.7-8.1 s)."""
    result = _run("""
import json, jax
from pymc_accel.backends.numpyro_nuts import numpyro_chain_method
print(json.dumps({"devices": len(jax.devices("cpu")),
                  "method": numpyro_chain_method("parallel", platform="cpu", chains=2)}))
""", devices=1)
    assert result == {"devices": 1, "method": "sequential"}


def test_one_cpu_device_warns_and_names_the_fix():
    result = _run("""
import json, warnings
from pymc_accel.backends.numpyro_nuts import numpyro_chain_method
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    numpyro_chain_method("parallel", platform="cpu", chains=4)
    numpyro_chain_method("sequential", platform="cpu", chains=4)  # asked for: no warning
print(json.dumps([str(w.message) for w in caught]))
""", devices=1)
    assert len(result) == 1
    assert "one CPU device" in result[0] and "Import pymc_accel" in result[0]
    assert "xla_force_host_platform_device_count=4" in result[0]


def test_blackjax_on_one_cpu_device_warns_too():
    """PyMC's BlackJAX path can only vectorize a run's chains on one device: it warns as
    NumPyro's does, whether or not the selection laid the candidate out as vectorized (it
    does, to price it so), and not where the user asked for vectorized chains."""
    pytest.importorskip("blackjax")
    result = _run("""
import json, warnings
from pymc_accel.backend import Candidate, SampleRequest
from pymc_accel.backends.numpyro_nuts import JaxNutsBackend
from pymc_accel.devices import discover
from pymc_accel.models import conjugate_normal
backend = JaxNutsBackend("blackjax_nuts", "blackjax")
model = conjugate_normal().model
run = dict(draws=20, tune=20, chains=2, random_seed=1, progressbar=False, quiet=True,
           compute_convergence_checks=False)
plain = Candidate("blackjax_nuts", "cpu", "float64", (("chain_method", "parallel"),))
laid_out, _ = backend.fit_memory(plain, None, discover(), SampleRequest(**run))
out = {"label": laid_out.label}
for name, candidate, kwargs in (("plain", plain, {}), ("laid_out", laid_out, {}),
                                ("asked", laid_out, {"chain_method": "vectorized"})):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backend.sample(model, candidate, SampleRequest(**run, backend_kwargs=kwargs))
    out[name] = [str(w.message) for w in caught if "one CPU device" in str(w.message)]
print(json.dumps(out))
""", devices=1)
    assert result["label"] == "blackjax_nuts[cpu,float64,chain_method=vectorized]"
    for name in ("plain", "laid_out"):
        assert len(result[name]) == 1 and "are vectorized on it" in result[name][0]
    assert result["asked"] == []
