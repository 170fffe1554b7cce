from __future__ import annotations

import re

import pytest

from pymc_accel.errors import UnknownBackendError
from pymc_accel.registry import build_registry

GOOD = '''
import pymc_accel
from pymc_accel.backends.numpyro_nuts import JaxNutsBackend

class Mine(JaxNutsBackend):
    def __init__(self):
        super().__init__(name="mine", jax_sampler="numpyro")

@pymc_accel.hookimpl
def pymc_accel_backends():
    return [Mine()]
'''


def test_builtins_are_registered_first_with_their_origin():
    reg = build_registry(autoload=False)
    assert reg.names()[:2] == ["numba", "numpyro"]
    assert all("built-in" in reg.origins[n] for n in ("numba", "numpyro"))
    assert reg.broken == []


def test_installed_blackjax_plugin_is_discovered_through_its_entry_point():
    reg = build_registry()
    assert "blackjax_nuts" in reg.names()
    assert reg.origins["blackjax_nuts"].startswith("pymc-accel-blackjax ")


def test_autoload_can_be_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("PYMC_ACCEL_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert "blackjax_nuts" not in build_registry().names()


def test_fake_plugin_is_discovered(make_plugin):
    make_plugin("mine", GOOD)
    reg = build_registry()
    assert "mine" in reg.names()
    assert reg.origins["mine"] == "fake-plugin-mine 9.9"


def test_plugin_raising_on_import_is_reported_and_others_work(make_plugin):
    make_plugin("boom", "raise RuntimeError('plugin import exploded')")
    reg = build_registry()
    broken = {b.name: b for b in reg.broken}
    assert broken["boom"].stage == "import"
    assert "plugin import exploded" in broken["boom"].error
    assert broken["boom"].origin == "fake-plugin-boom 9.9"
    assert {"numba", "numpyro", "blackjax_nuts"} <= set(reg.names())


def test_plugin_raising_in_hook_is_reported_and_others_work(make_plugin):
    make_plugin("hookboom", "import pymc_accel\n@pymc_accel.hookimpl\n"
                "def pymc_accel_backends():\n    raise ValueError('hook exploded')\n")
    make_plugin("mine", GOOD)
    reg = build_registry()
    broken = {b.name: b for b in reg.broken}
    assert broken["hookboom"].stage == "hook" and "hook exploded" in broken["hookboom"].error
    assert {"numba", "numpyro", "mine"} <= set(reg.names())


@pytest.mark.filterwarnings("ignore:PYMC_ACCEL_BLOCK_PLUGINS.*names other")
def test_blocked_plugin_is_never_imported(make_plugin, monkeypatch):
    make_plugin("boom", "raise RuntimeError('must not be imported')")
    monkeypatch.setenv("PYMC_ACCEL_BLOCK_PLUGINS", "boom, other")
    reg = build_registry()
    assert not any(b.name == "boom" for b in reg.broken)
    assert "boom" not in reg.names()
    assert "blackjax_nuts" not in build_registry(blocked=("blackjax",)).names()


def test_non_backend_and_duplicate_names_are_rejected(make_plugin):
    make_plugin("junk", "import pymc_accel\n@pymc_accel.hookimpl\n"
                "def pymc_accel_backends():\n    return [object()]\n")
    make_plugin("dup", "import pymc_accel\nfrom pymc_accel.backends.numba_cpu import NumbaBackend\n"
                "@pymc_accel.hookimpl\ndef pymc_accel_backends():\n    return [NumbaBackend()]\n")
    reg = build_registry()
    errors = {b.name: b.error for b in reg.broken if b.stage == "validate"}
    assert "Backend protocol" in errors["junk"]
    assert "already registered" in errors["dup"]
    assert "built-in" in reg.origins["numba"]


def test_unknown_backend_lists_registered_names():
    reg = build_registry(autoload=False)
    with pytest.raises(UnknownBackendError, match="numba, numpyro"):
        reg.get("stan")


def test_a_candidates_label_as_a_backend_name_is_answered_with_the_call_that_runs_it():
    """idata.attrs["pymc_accel_candidate"] passed as nuts_sampler was an unknown backend."""
    reg = build_registry(autoload=False)
    with pytest.raises(UnknownBackendError, match=re.escape(
            "to run it, pass nuts_sampler='deer_mala', device='cpu', precision='float32', "
            "method='deer', jacobian='full', window=64.")):
        reg.get("deer_mala[cpu,float32,method=deer,jacobian=full,window=64]")
    with pytest.raises(UnknownBackendError, match="Unknown backend 'stan\\[cpu\\]'"):
        reg.get("stan[cpu]")  # not a registered backend's label


def test_blackjax_plugin_refuses_an_incompatible_blackjax(monkeypatch):
    import pymc_accel_blackjax as plugin

    from pymc_accel.devices import Devices
    from pymc_accel.models import eight_schools
    from pymc_accel.profile import profile_model

    monkeypatch.setattr(plugin, "_blackjax_version", lambda: (1, 7))
    answers = plugin.BlackJaxNutsBackend().candidates(profile_model(eight_schools()),
                                                      Devices(cpu_cores=2, jax_installed=True))
    assert len(answers) == 1 and "pip install 'blackjax<1.6'" in answers[0].reason


def test_two_distributions_with_one_entry_point_name_report_the_one_not_loaded(make_plugin,
                                                                               tmp_path):
    """The second was dropped without a word: neither registered nor listed as broken."""
    make_plugin("mine", GOOD)
    (tmp_path / "fakeplugin_other.py").write_text(GOOD.replace('name="mine"', 'name="other"'))
    info = tmp_path / "other_dist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: other-dist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pymc_accel]\nmine = fakeplugin_other\n")
    reg = build_registry()
    loaded = {"mine", "other"} & set(reg.names())
    assert len(loaded) == 1
    (clash,) = [b for b in reg.broken if b.name == "mine"]
    assert "already used by" in clash.error and "rename one" in clash.error


def test_a_plugin_is_blocked_by_the_names_a_user_sees(monkeypatch):
    """PYMC_ACCEL_BLOCK_PLUGINS took only entry-point names, which no listing shows:
    blackjax_nuts (a backend name) blocked nothing."""
    monkeypatch.setenv("PYMC_ACCEL_BLOCK_PLUGINS", "blackjax_nuts")
    names = build_registry().names()
    assert "blackjax_nuts" not in names and "blackjax_mclmc" in names
    monkeypatch.setenv("PYMC_ACCEL_BLOCK_PLUGINS", "pymc-accel-blackjax")
    names = build_registry().names()
    assert not {"blackjax_nuts", "blackjax_mclmc"} & set(names) and "numba" in names


def test_autoload_is_on_when_the_variable_says_false(monkeypatch):
    monkeypatch.setenv("PYMC_ACCEL_DISABLE_PLUGIN_AUTOLOAD", "false")
    assert "blackjax_nuts" in build_registry().names()


def test_a_backend_name_that_is_not_plain_is_rejected(make_plugin):
    make_plugin("odd", GOOD.replace('name="mine"', 'name="bad[name],x"'))
    reg = build_registry()
    assert "bad[name],x" not in reg.names()
    (odd,) = [b for b in reg.broken if b.name == "odd"]
    assert odd.stage == "validate" and "not a plain name" in odd.error


def test_a_plugin_returning_no_result_is_a_plugin_error(make_plugin, monkeypatch):
    """sample() returning None failed later with AttributeError: 'NoneType' ... 'attrs'."""
    import pymc_accel
    from pymc_accel import registry as registry_module
    from pymc_accel.errors import PluginError
    from pymc_accel.models import eight_schools

    make_plugin("nothing", GOOD.replace('name="mine"', 'name="nothing"')
                + "\nMine.sample = lambda self, model, candidate, request: None\n")
    monkeypatch.setattr(registry_module, "_REGISTRY", build_registry())
    with pytest.raises(PluginError, match=r"'nothing' from plugin fake-plugin-nothing 9.9 "
                       r"returned NoneType.*PYMC_ACCEL_BLOCK_PLUGINS=nothing"):
        pymc_accel.sample(nuts_sampler="nothing", model=eight_schools(), draws=10, tune=10,
                          chains=2, progressbar=False)


def test_a_blocked_backend_is_named_as_blocked_not_unknown(monkeypatch):
    """It was "Unknown backend 'numba'", and with everything blocked "Registered backends: ,"."""
    monkeypatch.setenv("PYMC_ACCEL_BLOCK_PLUGINS", "numba")
    with pytest.raises(UnknownBackendError, match="'numba' is blocked by PYMC_ACCEL_BLOCK_PLUGINS"):
        build_registry().get("numba")


def test_a_block_list_name_that_matches_nothing_is_warned_about(monkeypatch):
    monkeypatch.setenv("PYMC_ACCEL_BLOCK_PLUGINS", "numbaa")
    with pytest.warns(UserWarning, match="numbaa, which no backend"):
        assert "numba" in build_registry().names()


def test_every_backend_blocked_is_one_clear_error(monkeypatch):
    from pymc_accel.errors import NoCandidateError
    from pymc_accel.models import eight_schools
    from pymc_accel.selection import select

    reg = build_registry(blocked=("numba", "numpyro", "deer_mala", "pymc-accel-blackjax",
                                  "pymc-accel-nutpie-jax"))
    with pytest.raises(UnknownBackendError, match="Registered backends: none"):
        reg.get("numba")
    with pytest.raises(NoCandidateError, match="No backend is registered: PYMC_ACCEL_BLOCK_PLUGINS"
                                               " blocks .*take the built-in backends"):
        select(eight_schools(), registry=reg)


def test_discovery_reads_the_metadata_of_plugin_distributions_only(monkeypatch):
    # parsing every installed distribution's METADATA was 0.1 s of a process's first selection
    import importlib.metadata

    read = []
    real = importlib.metadata.PathDistribution.read_text

    def counting(self, filename):
        if filename in ("METADATA", "PKG-INFO"):
            read.append(real(self, "entry_points.txt") or "")
        return real(self, filename)

    monkeypatch.setattr(importlib.metadata.PathDistribution, "read_text", counting)
    registry = build_registry()
    assert {"blackjax_nuts", "nutpie_jax"} <= set(registry.names())  # the plugins still load
    assert read and all("[pymc_accel]" in entry_points for entry_points in read)
