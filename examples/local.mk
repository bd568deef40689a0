# examples/local.mk - the examples (included by the top Makefile.am).

# Run by hand: udnn against PyTorch on the training example (docs/PERF.md),
# and a CPU run of it against a GPU one.
EXTRA_DIST += scripts/compare-pytorch.py scripts/check-cpu-gpu-agree

if HAVE_ZLIB
MNIST_SOURCES = \
	examples/mnist_data.c examples/mnist_data.h \
	examples/mnist_net.c examples/mnist_train.c examples/mnist_net.h examples/mnist_net_impl.h \
	examples/mnist_weights.c examples/mnist_weights.h \
	examples/mnist_rng.h

# The training example, installed: the README's first command runs it.
bin_PROGRAMS += examples/udnn-fashion-mnist
examples_udnn_fashion_mnist_SOURCES = examples/fashion_mnist.c $(MNIST_SOURCES)
examples_udnn_fashion_mnist_LDADD = libudnn.la $(ZLIB_LIBS) -lm

# The shortest path from a weights file to a prediction.
noinst_PROGRAMS += examples/infer
examples_infer_SOURCES = examples/infer.c $(MNIST_SOURCES)
examples_infer_LDADD = libudnn.la $(ZLIB_LIBS) -lm

if HAVE_CHECK
# One epoch on 2,000 training images on the CPU; exits 77 (skip) without
# the data set.
check_PROGRAMS += tests/check_fashion_mnist
TESTS += tests/check_fashion_mnist
tests_check_fashion_mnist_SOURCES = tests/check_fashion_mnist.c $(MNIST_SOURCES)
tests_check_fashion_mnist_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_fashion_mnist_LDADD = tests/libtestutil.la libudnn.la $(ZLIB_LIBS) $(CHECK_LIBS) -lm
endif

# The reference mode's bits on 1 thread and on 3; skipped without the data.
TESTS += tests/ref-threads.sh
endif
EXTRA_DIST += tests/ref-threads.sh
