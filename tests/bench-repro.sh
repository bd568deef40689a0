#!/bin/sh
# Reproducer lines: under UDNN_LOG=api every op logs the udnn-bench line
# that reproduces it.
#  1. A client program (examples/cnn_chain): every line it logs runs
#     unchanged in udnn-bench and PASSes its check.
#  2. Every problem of tests/inputs/bench_batch.txt: the line logged for
#     its op names the same problem, and running that line logs the same
#     line again (nothing is lost on the way round).
#  3. UDNN_VERIFY on the fake HIP backend (tests/fake2): the line logged
#     with a mismatch, run in udnn-bench, reproduces the failure.
top_builddir=${top_builddir:-.}
inputs=${UDNN_TEST_INPUTS:-${top_srcdir:-.}/tests/inputs}
bench="$top_builddir/tools/udnn-bench"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/udnn-bench-repro.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "bench-repro: FAIL: $*"; status=1; }
# the reproducer lines of a log, without the program's name
lines() { sed -n 's/^.*reproduce with: udnn-bench //p' "$1"; }

# 1. a client's calls
UDNN_LOG=api UDNN_LOG_FILE="$tmp/client.log" UDNN_BACKEND=cpu \
    "$top_builddir/examples/cnn_chain" >/dev/null 2>&1 || fail "examples/cnn_chain failed"
count=0
lines "$tmp/client.log" | sort -u > "$tmp/client.lines"
while read -r line; do
    count=$((count + 1))
    out=$("$bench" $line --iters 1 --warmup 0 2>&1)
    echo "$out"
    echo "$out" | grep -q '  PASS ' || fail "the logged line '$line' did not PASS"
done < "$tmp/client.lines"
[ "$count" -ge 4 ] || fail "examples/cnn_chain logged $count reproducer lines, expected its 4 ops"

# 2. round trips
quick="--backend cpu --no-check --iters 1 --warmup 0 --no-solver"
grep -Ev '^[[:space:]]*(#|$)' "$inputs/bench_batch.txt" > "$tmp/batch"
trips=0
while read -r problem; do
    rm -f "$tmp/1.log" "$tmp/2.log"
    first=$(UDNN_LOG=api UDNN_LOG_FILE="$tmp/1.log" "$bench" $problem $quick 2>&1 | cut -d' ' -f1-5)
    line=$(lines "$tmp/1.log" | tail -1)
    second=$(UDNN_LOG=api UDNN_LOG_FILE="$tmp/2.log" "$bench" $line $quick 2>&1 | cut -d' ' -f1-5)
    again=$(lines "$tmp/2.log" | tail -1)
    if [ -z "$line" ] || [ "$first" != "$second" ] || [ "$line" != "$again" ]; then
        fail "'$problem' logged '$line': '$first' became '$second'; it logs '$again'"
    fi
    trips=$((trips + 1))
done < "$tmp/batch"
echo "bench-repro: $trips problems survive the round trip"

# 3. a mismatch found by UDNN_VERIFY, reproduced
fake="$top_builddir/tests/fake2/.libs"
if [ -f "$fake/udnn_hip.so" ]; then
    UDNN_BACKEND_PATH="$fake" UDNN_VERIFY=1 UDNN_LOG=error UDNN_LOG_FILE="$tmp/verify.log" \
        "$bench" scale --n 2 --c 3 --h 4 --w 5 --alpha 2 --backend hip --no-check --iters 1 \
        --warmup 0 --no-solver >/dev/null 2>&1
    line=$(sed -n 's/^.*UDNN_VERIFY: udnnScaleTensor: .*reproduce with: udnn-bench //p' \
           "$tmp/verify.log" | head -1)
    [ -n "$line" ] || fail "UDNN_VERIFY logged no mismatch for the fake backend's wrong op"
    out=$(UDNN_BACKEND_PATH="$fake" "$bench" $line --iters 1 --warmup 0 2>&1)
    echo "$out"
    echo "$out" | grep -q '  FAIL ' || fail "the UDNN_VERIFY line '$line' did not reproduce the FAIL"
else
    echo "bench-repro: no fake backend at $fake; part 3 skipped"
fi
exit $status
