"""Which jaxlib releases know XLA's ``--xla_cpu_experimental_ynn_fusion_type`` flag, and which
hand a row sum to YNNPACK by default: the facts behind ``pymc_accel.xla_tuning.CHECKED_JAXLIB``.

XLA ends the process on a flag it does not know, so pymc-accel sets the flag only for the
releases checked here. For each of ``--releases`` this downloads the jaxlib wheel from PyPI
(``pip download``, this Python's platform) and looks for the flag's name in its shared
libraries; with ``--compile`` it also installs that jax and jaxlib in a virtual environment of
its own and compiles a regression's gradient (a sum over each row's covariates and, backwards,
over the rows) with XLA's defaults and with the flag, saying whether JAX started and whether
the program holds a YNNPACK fusion:

    python bench/check_ynn_flag_releases.py --releases 0.8.0,0.8.1,0.10.0,0.10.2,0.12.0.1 \\
        --compile
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

FLAG = "xla_cpu_experimental_ynn_fusion_type"

_PROGRAM = """
import json, os
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
x = jnp.ones((2000, 5))
grad = jax.jit(jax.grad(lambda b, x: jnp.sum(jnp.sum(x * b, axis=1) ** 2)))
program = grad.lower(jnp.ones(5), x).compile().as_text()
print(json.dumps({"ynn_fusions": program.count("ynn_fusion")}))
"""


def flag_in_wheel(release: str, directory: Path) -> bool:
    """Whether jaxlib ``release``'s shared libraries name the flag."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", f"jaxlib=={release}", "-d", str(directory)],
                   check=True, capture_output=True)
    (wheel,) = directory.glob(f"jaxlib-{release}-*.whl")
    with zipfile.ZipFile(wheel) as z:
        return any(FLAG.encode() in z.read(n) for n in z.namelist() if n.endswith(".so"))


def compiled(release: str, directory: Path) -> dict:
    """JAX of ``release`` in a virtual environment: the row sums' YNNPACK fusions with XLA's
    defaults and with ``-reduce``, or the error that ended the process."""
    env_dir = directory / f"venv-{release}"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = str(env_dir / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", f"jax=={release}",
                    f"jaxlib=={release}"], check=True, capture_output=True)
    out = {}
    for label, flags in (("default", ""), ("reduce_off", f"--{FLAG}=-reduce")):
        run = subprocess.run([python, "-c", _PROGRAM], capture_output=True, text=True,
                             env={"JAX_PLATFORMS": "cpu", "XLA_FLAGS": flags,
                                  "PATH": "/usr/bin:/bin"})
        out[label] = (json.loads(run.stdout.splitlines()[-1])["ynn_fusions"]
                      if run.returncode == 0 else f"exit {run.returncode}: {run.stderr[-200:]}")
    return out


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--releases", default="0.8.0,0.8.1,0.10.0,0.10.2,0.12.0.1")
    p.add_argument("--compile", action="store_true",
                   help="also compile a row sum's gradient in each release's own environment")
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for release in args.releases.split(","):
            directory = Path(tmp) / release
            directory.mkdir()
            row = {"jaxlib": release, "flag_in_binary": flag_in_wheel(release, directory)}
            if args.compile:
                row["ynn_fusions"] = compiled(release, directory)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
