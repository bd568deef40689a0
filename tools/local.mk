# tools/local.mk - udnn-bench, its suites and tests, and the core parts
# it drives: reproducer lines (UDNN_LOG=api) and UDNN_VERIFY (included by
# the top Makefile.am).

core_libudnn_core_la_SOURCES += core/repro.c core/verify.c

bin_PROGRAMS += tools/udnn-bench
tools_udnn_bench_SOURCES = \
	tools/bench.h \
	tools/bench_args.h tools/bench_args.c \
	tools/bench_data.h tools/bench_data.c \
	tools/bench_problem.c \
	tools/bench_families.h tools/bench_families.c \
	tools/bench_conv.c \
	tools/bench_eltwise.c \
	tools/bench_pool.c \
	tools/bench_norm.c \
	tools/bench_dropout.c \
	tools/bench_tensor_ops.c \
	tools/bench_matmul.c \
	tools/bench_copy.c \
	tools/bench_run.h tools/bench_run.c \
	tools/bench_device.h tools/bench_device.c \
	tools/bench_check.h tools/bench_check.c \
	tools/bench_probe.h tools/bench_probe.c \
	tools/bench_peer.h tools/bench_peer.c \
	tools/bench_report.h tools/bench_report.c \
	tools/bench_suites.h tools/bench_suites.c \
	tools/bench_driver.h tools/bench_driver.c \
	tools/bench_main.c
tools_udnn_bench_CPPFLAGS = $(AM_CPPFLAGS) \
	-DUDNN_BENCH_SUITEDIR='"$(pkgdatadir)/suites"' \
	-DUDNN_BENCH_SRC_SUITEDIR='"$(abs_top_srcdir)/tools/suites"'
tools_udnn_bench_LDADD = libudnn.la -lm
tools_udnn_bench_LDFLAGS =
# the peers (bench_peer.c picks one by backend), each where configure
# found it: oneDNN for the CPU backend; cuDNN and cuBLAS for CUDA, which
# only udnn-bench links (--with-cudnn)
if HAVE_ONEDNN
tools_udnn_bench_SOURCES += tools/bench_onednn.c
tools_udnn_bench_CPPFLAGS += -DUDNN_BENCH_ONEDNN $(ONEDNN_CPPFLAGS)
tools_udnn_bench_LDADD += $(ONEDNN_LIBS)
endif
# the CUDA runtime for the device clock and copy (bench_device.c) wherever
# the CUDA backend is built
if HAVE_CUDA
tools_udnn_bench_CPPFLAGS += -DUDNN_BENCH_CUDART -I$(CUDA_HOME)/include
tools_udnn_bench_LDADD += -L$(CUDA_HOME)/lib64 -lcudart
tools_udnn_bench_LDFLAGS += -Wl,-rpath,$(CUDA_HOME)/lib64
endif
if HAVE_CUDNN
tools_udnn_bench_SOURCES += tools/bench_cudnn.c
tools_udnn_bench_CPPFLAGS += -DUDNN_BENCH_CUDNN $(CUDNN_CPPFLAGS)
tools_udnn_bench_LDADD += $(CUDNN_LIBS)
tools_udnn_bench_LDFLAGS += $(CUDNN_LDFLAGS)
endif

# The suites' tables, installed where udnn-bench looks for them.
benchsuitesdir = $(pkgdatadir)/suites
dist_benchsuites_DATA = \
	tools/suites/resnet50.csv \
	tools/suites/memory-bound.txt \
	tools/suites/deepbench_conv_training.csv \
	tools/suites/deepbench_conv_inference_server.csv \
	tools/suites/deepbench_conv_inference_device.csv \
	tools/suites/deepbench_gemm_training.csv \
	tools/suites/deepbench_gemm_inference_server.csv
dist_noinst_DATA = tools/udnn-bench.md

# ---- tests ---------------------------------------------------------------
if HAVE_CHECK
check_PROGRAMS += tests/check_verify
tests_check_verify_SOURCES = tests/check_verify.c
tests_check_verify_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_verify_LDADD = tests/libtestutil.la libudnn.la $(CHECK_LIBS) -lm
# a fake HIP backend: host memory, one right op and one wrong one
check_LTLIBRARIES += tests/fake2/udnn_hip.la
tests_fake2_udnn_hip_la_SOURCES = tests/fake2/verify_backend.c
tests_fake2_udnn_hip_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
TESTS += tests/check_verify tests/bench-batch.sh tests/bench-repro.sh
endif
EXTRA_DIST += tests/bench-batch.sh tests/bench-repro.sh
