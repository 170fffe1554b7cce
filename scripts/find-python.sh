#!/usr/bin/env bash
# Print the path of a Python >= 3.12 interpreter, or explain what to install and fail.
# PyMC 6 needs Python >= 3.12. A bare `python3.12` can be a pyenv shim that fails unless
# pyenv selects that version, so every candidate is *run*, not just looked up.
set -u
ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }
candidates=()
[ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
candidates+=(python3.12 python3.13 python3)
root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
for d in $(ls -d "$root"/versions/3.1[2-9]* 2>/dev/null | sort -V); do candidates+=("$d/bin/python"); done
for c in /usr/local/bin/python3.1[2-9] /usr/bin/python3.1[2-9]; do [ -x "$c" ] && candidates+=("$c"); done
for c in "${candidates[@]}"; do
  path=$(command -v "$c" 2>/dev/null) || continue
  if ok "$path"; then echo "$path"; exit 0; fi
done
cat >&2 <<'MSG'
pymc-accel needs Python >= 3.12 (PyMC 6 requires it), and none was found.
Install one, then run the command again, for example:
  pyenv install 3.12        (then: make PYTHON=$(pyenv root)/versions/3.12.*/bin/python ...)
  apt-get install python3.12 python3.12-venv
or point the Makefile at an interpreter: make PYTHON=/path/to/python3.12 test
MSG
exit 1
