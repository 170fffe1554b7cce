from __future__ import annotations

import jax
import numpy as np
import pymc as pm
import pymc.sampling.jax as pmjax
import pytest

from pymc_accel.backends.flat_position import Leaves, flat_position, flatten_points

MEANS = {"a": -3.0, "v": np.array([10.0, 20.0, 30.0]), "m": np.arange(6.0).reshape(2, 3) * 100}


def _shapes_model() -> pm.Model:
    """Three value variables of three shapes (scalar, vector, matrix) and a transformed one,
    no data: the posterior is the prior, and each element's mean says where it came from."""
    with pm.Model() as model:
        pm.Normal("a", MEANS["a"], 1.0)
        pm.Normal("v", MEANS["v"], 1.0)
        pm.Normal("m", MEANS["m"], 1.0)
        pm.HalfNormal("s", 1.0)
    return model


@pytest.mark.parametrize("chains", [1, 3])
def test_points_flatten_in_variable_order_and_draws_split_back(chains):
    from pymc_accel.backends.jax_model import jax_precision

    rng = np.random.default_rng(0)
    shapes = [(), (3,), (2, 3)]
    lead = () if chains == 1 else (chains,)
    points = [rng.normal(size=lead + s) for s in shapes]
    with jax_precision("float64"):  # the leaves take JAX's precision, as the sampler's do
        flat, leaves = flatten_points(points, chains)
    assert flat.shape == lead + (10,)
    per_chain = flat.reshape(-1, 10)
    last = [p.reshape((-1,) + s)[-1] for p, s in zip(points, shapes)]  # the last chain's
    np.testing.assert_array_equal(per_chain[-1], np.concatenate([x.ravel() for x in last]))
    # draws (chains, draws, dim) back to one array per variable, on the host as they came
    draws = np.repeat(per_chain.reshape(chains, 1, 10), 4, axis=1)
    split = leaves.split(draws)
    assert [type(x) for x in split] == [np.ndarray] * 3
    assert [x.shape for x in split] == [(chains, 4) + s for s in shapes]
    for x, want in zip(split, last):
        np.testing.assert_array_equal(x[-1, -1], want)


def test_float32_leaves_flatten_to_float32_and_split_back_to_it():
    from pymc_accel.backends.jax_model import jax_precision

    with jax_precision("float32"):
        flat, leaves = flatten_points([np.zeros((2, 3)), np.ones(2)], chains=2)
    assert flat.dtype == np.float32 and flat.shape == (2, 4)
    assert all(x.dtype == np.float32 for x in leaves.split(np.zeros((2, 5, 4), np.float32)))


def test_device_draws_split_on_the_device():
    leaves = Leaves([np.zeros(()), np.zeros((2,))])
    split = leaves.split(jax.numpy.arange(6.0).reshape(2, 3))
    assert all(isinstance(s, jax.Array) for s in split)
    np.testing.assert_array_equal(np.asarray(split[1]), [[1.0, 2.0], [4.0, 5.0]])


@pytest.mark.parametrize("jax_sampler", ["numpyro", "blackjax"])
def test_the_swap_is_undone_after_the_block_nested_or_failed(jax_sampler):
    name = {"numpyro": "_sample_numpyro_nuts", "blackjax": "_sample_blackjax_nuts"}[jax_sampler]
    original = getattr(pmjax, name)
    with flat_position(jax_sampler) as flat:
        assert flat
        swapped = getattr(pmjax, name)
        assert swapped is not original and swapped.flattens_position
        with flat_position(jax_sampler):
            assert getattr(pmjax, name) is swapped  # not wrapped twice
        assert getattr(pmjax, name) is swapped
    assert getattr(pmjax, name) is original
    with pytest.raises(RuntimeError), flat_position(jax_sampler):
        raise RuntimeError("a sampler failed")
    assert getattr(pmjax, name) is original


def test_a_pymc_without_the_sampler_function_samples_as_pymc_does(monkeypatch):
    monkeypatch.delattr(pmjax, "_sample_numpyro_nuts")
    with flat_position("numpyro") as flat:
        assert not flat
    assert not hasattr(pmjax, "_sample_numpyro_nuts")


@pytest.mark.parametrize("nuts_sampler", ["numpyro", "blackjax_nuts"])
def test_the_sampler_sees_one_array_and_each_element_keeps_its_place(nuts_sampler, monkeypatch):
    import pymc_accel

    if nuts_sampler == "blackjax_nuts":
        pytest.importorskip("blackjax")
    name = "_sample_numpyro_nuts" if nuts_sampler == "numpyro" else "_sample_blackjax_nuts"
    seen = []
    sampler_fn = getattr(pmjax, name)

    def spy(**kwargs):
        seen.append([np.shape(p) for p in kwargs["initial_points"]])
        return sampler_fn(**kwargs)

    monkeypatch.setattr(pmjax, name, spy)
    idata = pymc_accel.sample(model=_shapes_model(), nuts_sampler=nuts_sampler, draws=400,
                              tune=300, chains=2, random_seed=1, progressbar=False)
    assert seen == [[(2, 11)]]  # one leaf: 1 + 3 + 6 + 1 dimensions, two chains
    assert getattr(pmjax, name) is spy  # put back
    post = idata.posterior
    assert post["m"].dims == ("chain", "draw", "m_dim_0", "m_dim_1")
    for var, mean in MEANS.items():  # prior sd 1: 0.5 is over 10 Monte Carlo standard errors
        np.testing.assert_allclose(post[var].mean(("chain", "draw")), mean, atol=0.5)
    assert abs(float(post["s"].mean()) - np.sqrt(2 / np.pi)) < 0.15
    assert set(idata.sample_stats.data_vars) >= {"diverging", "n_steps", "lp"}


def test_a_thread_local_precision_leaves_the_process_setting_alone():
    """Measured mode times JAX gradients in a worker thread that may outlive its selection:
    its precision must not switch a run's under it."""
    import threading

    import jax
    import jax.numpy as jnp

    from pymc_accel.backends.jax_model import jax_precision

    before, seen = jax.config.jax_enable_x64, {}
    inside, done = threading.Event(), threading.Event()

    def timing():
        with jax_precision("float32" if before else "float64", process_wide=False):
            seen["dtype"] = jnp.zeros(1).dtype
            inside.set()
            done.wait(10)

    worker = threading.Thread(target=timing)
    worker.start()
    inside.wait(10)
    here = jnp.zeros(1).dtype, jax.config.jax_enable_x64  # this thread, while the worker is in
    done.set()
    worker.join()
    assert seen["dtype"] == (jnp.float32 if before else jnp.float64)
    assert here == (jnp.float64 if before else jnp.float32, before)
