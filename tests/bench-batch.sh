#!/bin/sh
# udnn-bench on the CPU: every line of tests/inputs/bench_batch.txt (every
# op family) must PASS its check against cpu/ref, with --compare too; the
# acceptance line prints PASS and a rate, the copy family its GB/s; --csv
# prints exactly the documented columns; a benchdnn descriptor and the
# flags name the same problem; --clock chooses the clock; a mistyped
# option fails, naming it.
top_builddir=${top_builddir:-.}
inputs=${UDNN_TEST_INPUTS:-${top_srcdir:-.}/tests/inputs}
bench="$top_builddir/tools/udnn-bench"
status=0
fail() { echo "bench-batch: FAIL: $*"; status=1; }

# every family, checked
batch="$inputs/bench_batch.txt"
out=$("$bench" --backend cpu --check --iters 2 --warmup 0 --batch "$batch" 2>&1)
rc=$?
echo "$out"
problems=$(grep -cEv '^[[:space:]]*(#|$)' "$batch")
passed=$(echo "$out" | grep -c '  PASS ')
[ "$rc" -eq 0 ] || fail "udnn-bench --batch exited $rc"
[ "$passed" -eq "$problems" ] || fail "$passed of $problems problems passed"
echo "$out" | grep -q "^summary: $problems problems, 0 failed" || fail "no clean summary line"

# the acceptance line: PASS and a rate
line=$("$bench" conv --n 2 --c 5 --h 13 --w 11 --k 7 --r 3 --s 3 --pad 1 --backend cpu 2>&1)
echo "$line"
echo "$line" | grep -Eq ' PASS .* [0-9.e+-]+ TFLOP/s' || fail "the acceptance line: $line"

# copy: a device-to-device copy of the tensor's bytes (udnnMemcpy on the
# CPU), on any backend, its GB/s counting each byte read and written
line=$("$bench" copy --n 2 --c 3 --h 16 --w 16 --backend cpu 2>&1)
echo "$line"
echo "$line" | grep -Eq '^copy d2d:2x3x16x16 .* PASS .* solver memcpy .* [0-9.e+-]+ GB/s' ||
    fail "the copy line: $line"

# --burst: K runs a sample, with the peer too; out of range is an error
# that names it
line=$("$bench" act --n 2 --c 3 --h 16 --w 16 --backend cpu --compare --burst 3 --iters 2 2>&1)
echo "$line"
echo "$line" | grep -Eq ' PASS .* median [0-9.e+-]+ ms .* [0-9.e+-]+ GB/s' || fail "--burst 3: $line"
err=$("$bench" act --n 2 --c 3 --h 4 --w 5 --backend cpu --burst 0 2>&1)
rc=$?
[ "$rc" -ne 0 ] && echo "$err" | grep -q -- '--burst 0' || fail "--burst 0: $err"

# --clock: the host's clock on the CPU; device events only where a GPU
# backend has them, else the row fails saying so; another value names it
line=$("$bench" act --n 2 --c 3 --h 16 --w 16 --backend cpu --clock host --iters 2 2>&1)
echo "$line"
echo "$line" | grep -Eq ' PASS .* median [0-9.e+-]+ ms' || fail "--clock host: $line"
err=$("$bench" act --n 2 --c 3 --h 4 --w 5 --backend cpu --clock device 2>&1)
rc=$?
[ "$rc" -ne 0 ] && echo "$err" | grep -q 'ERROR device clock: ' || fail "--clock device: $err"
err=$("$bench" act --n 2 --c 3 --h 4 --w 5 --backend cpu --clock wall 2>&1)
rc=$?
[ "$rc" -ne 0 ] && echo "$err" | grep -q -- '--clock wall: expected auto, device or host' ||
    fail "--clock wall: $err"

# the CUDA backend where it answers (scripts/gpu-check runs make check
# with UDNN_BACKEND_PATH at its plugin): samples timed by device events,
# the copy the runtime's own (bench_device.h); skipped where no handle
# can be made
line=$("$bench" copy --n 2 --c 3 --h 16 --w 16 --backend cuda --clock device --iters 2 2>&1)
case "$line" in
*"creating the handle"*) echo "bench-batch: no CUDA backend here; its device clock not tried" ;;
*)
    echo "$line"
    echo "$line" | grep -Eq '^copy d2d:2x3x16x16 .* PASS .* solver memcpy .* [0-9.e+-]+ GB/s' ||
        fail "the cuda copy by events: $line"
    line=$("$bench" act --n 2 --c 3 --h 16 --w 16 --backend cuda --clock device --burst 3 \
        --iters 2 2>&1)
    echo "$line"
    echo "$line" | grep -Eq ' PASS .* median [0-9.e+-]+ ms' || fail "cuda act by events: $line"
    ;;
esac

# --compare on every family: a problem without a peer still runs and passes
out=$("$bench" --backend cpu --compare --iters 1 --warmup 0 --no-solver --batch "$batch" 2>&1)
rc=$?
[ "$rc" -eq 0 ] || fail "udnn-bench --compare --batch exited $rc: $(echo "$out" | grep -v PASS | head -5)"

# CSV: the header, then one row per problem with twelve columns
csv=$("$bench" --backend cpu --csv --iters 1 --warmup 0 --batch "$batch" 2>&1)
header=$(echo "$csv" | head -1)
[ "$header" = "op,problem,backend,dtype,layout,solver,time_ms,rate,rate_unit,peer,peer_time_ms,ratio" ] ||
    fail "CSV header: $header"
rows=$(echo "$csv" | grep -c '^[a-z]*,[^,]*,cpu,')
[ "$rows" -eq "$problems" ] || fail "CSV has $rows rows for $problems problems"
bad=$(echo "$csv" | grep '^[a-z]*,' | awk -F, 'NF != 12' | head -3)
[ -z "$bad" ] || fail "CSV rows without 12 columns: $bad"

# a descriptor and its flags are one problem
a=$("$bench" conv g2mb2ic4ih9iw8oc6kh3kw3sh2sw2ph1pw1dh1dw1 --backend cpu --iters 1 2>&1 | cut -d' ' -f2)
b=$("$bench" conv --groups 2 --n 2 --c 4 --h 9 --w 8 --k 6 --r 3 --s 3 --stride 2 --pad 1 \
    --dilation 2 --backend cpu --iters 1 2>&1 | cut -d' ' -f2)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "descriptor gives '$a', flags give '$b'"

# a mistyped option is an error that names it
err=$("$bench" act --n 2 --c 3 --h 4 --w 5 --moed relu --backend cpu 2>&1)
rc=$?
[ "$rc" -ne 0 ] && echo "$err" | grep -q 'act does not take --moed' || fail "a mistyped option: $err"

[ $status -eq 0 ] && echo "bench-batch: all $problems problems PASS"
exit $status
