#!/bin/sh
# Runs the op suites with every fast CPU solver disabled, so that cpu/ref
# (the oracle) is itself tested on the types the fast solvers would take.
# Only the CPU runs here: the GPU backends' runs of the suites are done.
status=0
for t in check_conv check_activation check_pooling check_softmax check_tensor_ops \
         check_batchnorm check_matmul check_independent; do
    out=$(UDNN_DISABLE_SOLVERS='fast_*' UDNN_TEST_BACKENDS=cpu "${top_builddir:-.}/tests/$t" 2>&1)
    rc=$?
    echo "$out" | sed "s|^|$t (ref only): |" | grep -E "Checks|:F:|:E:"
    [ $rc -eq 0 ] || status=1
done
exit $status
