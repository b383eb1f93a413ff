#!/bin/bash
# Host side: downloads the wheels the notebook's execution needs on the device (nbclient and
# ipykernel at tools/requirements.txt's versions, nbformat, and what they need) for the device's
# Python 3.12 into .whl/ (git-ignored); a device call then carries [".whl"] (17 MiB on 2026-12-02).
# `wheels.sh all`: every wheel of tools/requirements.txt but matplotlib's (the figures are drawn on
# the host; `plot.py --check` needs none), for the README's test command there (.ci/run with a
# venv made from .whl: the host checks run too; about 27 MiB).
set -eu
cd "$(dirname "$0")/../.."
rm -rf .whl
if [ "${1:-}" = all ]; then
  grep -v '^matplotlib' tools/requirements.txt > /tmp/requirements-device.txt
  want=(-r /tmp/requirements-device.txt)
else
  want=("$(grep '^nbclient==' tools/requirements.txt)" "$(grep '^ipykernel==' tools/requirements.txt)" nbformat)
fi
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  -d .whl "${want[@]}"
ls .whl | wc -l
