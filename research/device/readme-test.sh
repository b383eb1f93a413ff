#!/bin/bash
# Device side (not a test, not part of the module): issue 24's measurement of the README's test
# command on the GPU machine, as a maintainer runs it: .ci/run from an empty build tree, in a venv
# made offline from the carried wheels (host: `bash research/device/wheels.sh all`; the call
# carries [".whl"]). CUDA 12.4 is not prepared (no network there: the compat test skips, saying
# so). Writes $OUT/ctest.log as it runs (a call cut off at its limit still returns it): a header
# line, then .ci/run's output verbatim, then its exit code and wall time; and $OUT/LastTest.log.
# One call is at most 600 s: CTEST_ARGS="-E 'day39-sort\.gpu'" (then "-R 'day39-sort\.gpu'" in
# the next call, KEEP_BUILD=1 to reuse the build the machine still holds) appends a test filter to
# the README's command in this device copy of the tree only; the header line names it.
set -u
if [ -n "${CTEST_ARGS:-}" ]; then
  sed -i "/^<!-- test-command -->$/,/^\`\`\`$/{/^cmake /s|\$| ${CTEST_ARGS}|}" README.md
  grep -m1 '^cmake -S' README.md
fi
py=python3
$py -c 'import venv, ensurepip' 2> /dev/null || py=/opt/torch/.venv/bin/python3
grep -v '^matplotlib' tools/requirements.txt > /tmp/requirements-device.txt
$py -m venv /tmp/v && /tmp/v/bin/python -m pip install -q --no-index --find-links .whl \
  -r /tmp/requirements-device.txt > "$OUT/pip.txt" 2>&1
[ "${KEEP_BUILD:-0}" = 1 ] || rm -rf build
log=$OUT/ctest.log
echo "# $(date -u '+%F %T') UTC | $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" \
     "| $(nproc) CPUs | $(git log -1 --format=%h) + working tree${CTEST_ARGS:+ | ctest $CTEST_ARGS}" > "$log"
start=$(date +%s.%N)
REDUCTION_CI_VENV=/tmp/v REDUCTION_CUDA12_PREPARE=0 PIP_NO_INDEX=1 PIP_FIND_LINKS=$PWD/.whl \
  bash .ci/run >> "$log" 2>&1
rc=$?
echo "# .ci/run: exit code $rc, wall time $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s" >> "$log"
cp build/Testing/Temporary/LastTest.log "$OUT/" 2> /dev/null
exit $rc
