"""One JSON row per model of ``compare_evaluator.models()``, for the benches that compare
something model by model (``compare_check_with_jax.py``, ``compare_jax_gradient.py``,
``count_guarded_distances.py``, ``check_last_gradients.py``)."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable


def model_parser(doc: str) -> argparse.ArgumentParser:
    """A parser of ``--models`` (comma-separated names, or ``all``) and ``--markdown``, described
    by ``doc``'s first line."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--models", required=True,
                        help="comma-separated names of the zoo, its held-out set and the user "
                             "sweep (compare_evaluator.models()), or 'all'")
    parser.add_argument("--markdown", metavar="FILE", help="also write a markdown table here")
    return parser


def chosen_models(parser: argparse.ArgumentParser, spec: str) -> tuple[list[str], dict]:
    """The names ``spec`` asks for (comma-separated, or ``all``) and every model's builder;
    ``parser`` reports an unknown name."""
    from compare_evaluator import models as every_model

    models = every_model()
    names = list(models) if spec == "all" else spec.split(",")
    unknown = [n for n in names if n not in models]
    if unknown:
        parser.error(f"unknown models: {', '.join(unknown)}")
    return names, models


def rows_here(names: list[str], models: dict, compare: Callable[[str, Callable], dict],
              ) -> list[dict]:
    """``compare(name, build)`` for each of ``names`` in this process, each row printed as a
    JSON line as it is found; a model whose comparison raises gets a row saying so."""
    rows = []
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                row = compare(name, models[name])
            except Exception as exc:  # one model's failure is a row, not the end of the run
                row = {"model": name, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main_of(doc: str, compare: Callable[[str, Callable], dict],
            markdown: Callable[[list[dict], str], str]) -> None:
    """A bench's whole command line: ``--models`` and ``--markdown`` parsed (:func:`model_parser`
    of ``doc``), ``compare`` run on each model in this process (:func:`rows_here`), and the
    table ``markdown(rows, command)`` written where ``--markdown`` says."""
    from pathlib import Path

    parser = model_parser(doc)
    args = parser.parse_args()
    names, models = chosen_models(parser, args.models)
    rows = rows_here(names, models, compare)
    if args.markdown:
        command = "JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python " + " ".join(sys.argv)
        Path(args.markdown).write_text(markdown(rows, command))


#: What ``--chunk`` says, for the benches that take it.
CHUNK_HELP = ("run the models this many at a time, each lot in a process of its own (0: all in "
              "this one). XLA's CPU compiler ran out of memory maps after 84 models in one "
              "process ('Unable to allocate section memory'); a lot whose process dies has its "
              "models run one a process.")


def rows_in_processes(script: str, names: list[str], chunk: int,
                      options: list[str] | None = None) -> list[dict]:
    """``names``' rows from ``script`` (a bench printing one JSON row per model, run with
    ``--models`` and ``options``), ``chunk`` models a process, printed as each lot ends; where a
    process dies, each model it left without a row from a process of its own, and a row saying
    how that one ended where it dies too."""
    import subprocess

    def run(lot: list[str]) -> tuple[dict, str]:
        done = subprocess.run([sys.executable, script, "--models", ",".join(lot),
                               *(options or [])], capture_output=True, text=True)
        found = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        by_name: dict[str, list[dict]] = {}
        for row in found:
            by_name.setdefault(row["model"], []).append(row)
        return by_name, done.stderr.strip()[-200:]

    rows = []
    for i in range(0, len(names), chunk):
        lot = names[i:i + chunk]
        by_name, _ = run(lot)
        for name in lot:
            if name not in by_name:
                alone, ended = run([name])
                by_name[name] = alone.get(name) or [
                    {"model": name, "error": f"its process died: {ended or 'no message'}"}]
            for row in by_name[name]:
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows
