"""``pymc-accel backends`` shows where each plugin backend came from: distribution and version."""

from __future__ import annotations

from importlib.metadata import version

import pytest

pytest.importorskip("pymc_accel_blackjax")
pytest.importorskip("pymc_accel_nutpie_jax")


def test_backends_command_lists_plugin_backends_with_distribution_and_version(capsys):
    from pymc_accel.cli import main
    from pymc_accel.registry import get_registry

    get_registry(refresh=True)
    assert main(["backends"]) == 0
    rows = {line.split("│")[1].strip(): line for line in capsys.readouterr().out.splitlines()
            if line.count("│") >= 4}
    for name, dist in [("blackjax_nuts", "pymc-accel-blackjax"),
                       ("blackjax_mclmc", "pymc-accel-blackjax"),
                       ("nutpie_jax", "pymc-accel-nutpie-jax")]:
        assert f"{dist} {version(dist)}" in rows[name], rows.get(name)
        assert "registered" in rows[name]
