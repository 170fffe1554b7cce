"""PyTensor graph rewrites pymc-accel's backends apply before compiling a model's log density."""

from __future__ import annotations
