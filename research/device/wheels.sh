#!/bin/bash
# Host side: downloads the wheels the notebook's execution needs on the device (nbclient and
# ipykernel at tools/requirements.txt's versions, nbformat, and what they need) for the device's
# Python 3.12 into .whl/ (git-ignored); a device call then carries [".whl"] (17 MiB on 2026-12-02).
set -eu
cd "$(dirname "$0")/../.."
rm -rf .whl
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  -d .whl "$(grep '^nbclient==' tools/requirements.txt)" "$(grep '^ipykernel==' tools/requirements.txt)" nbformat
ls .whl | wc -l
