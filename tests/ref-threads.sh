#!/bin/sh
# UDNN_DETERMINISTIC=reference promises the CPU reference's bits on any
# machine, so they must not depend on the number of threads: a short
# training run of the example with --bn --dropout 0.3 (convolution and its
# bias, batch norm, dropout, pooling, activation, matmul, softmax, the
# tensor ops of the update) on 1 thread and on 3 must save the same
# weights, byte for byte. Exits 77 (skipped) without the Fashion-MNIST data.
top_builddir=${top_builddir:-.}
prog="$top_builddir/examples/udnn-fashion-mnist"
data=${UDNN_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
    echo "ref-threads: no Fashion-MNIST data in $data; skipped"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/udnn-ref-threads.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
for n in 1 3; do
    if ! UDNN_DETERMINISTIC=reference OMP_NUM_THREADS=$n "$prog" --backend cpu --data "$data" \
        --epochs 1 --train-images 256 --test-images 64 --bn --dropout 0.3 \
        --save "$tmp/weights-$n" >"$tmp/out-$n" 2>&1; then
        echo "ref-threads: the run on $n thread(s) failed:"
        cat "$tmp/out-$n"
        exit 1
    fi
done
if ! cmp "$tmp/weights-1" "$tmp/weights-3"; then
    echo "ref-threads: FAIL: the weights after 4 batches differ between 1 and 3 threads"
    exit 1
fi
echo "ref-threads: the weights after 4 batches are the same bytes on 1 and 3 threads"
