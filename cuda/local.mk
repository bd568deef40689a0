# cuda/local.mk - the CUDA backend plugin (included by the top Makefile.am).
#
# udnn_cuda.so is a libtool module in $(pkglibdir) exporting only
# udnn_backend_entry; libudnn never links a CUDA library. libtool has no CUDA
# tag, so each .cu goes through `libtool --tag=CC --mode=compile` and
# cuda/nvcc-wrap.sh, which hands nvcc the flags it understands.

UDNN_CUDA_CU = cuda/backend.cu cuda/eltwise.cu cuda/tensor_ops.cu cuda/conv.cu cuda/pool.cu \
	cuda/pool_fast.cu cuda/pool_tile.cu cuda/softmax.cu cuda/softmax_rows.cu cuda/lrn.cu \
	cuda/bn.cu cuda/bn_flow.cu cuda/bn_rows.cu cuda/bn_cluster.cu cuda/norm.cu cuda/norm_rows.cu \
	cuda/norm_cluster.cu cuda/norm_grad.cu cuda/dropout.cu cuda/reduce.cu cuda/matmul.cu cuda/ref_bits.cu
UDNN_CUDA_LO = $(UDNN_CUDA_CU:.cu=.lo)
UDNN_CUDA_H = cuda/vendor.h cuda/gpu.h cuda/kernels.h cuda/act.h cuda/pool.h cuda/bn.h cuda/norm.h \
	cuda/softmax.h
EXTRA_DIST += $(UDNN_CUDA_CU) $(UDNN_CUDA_H) cuda/nvcc-wrap.sh scripts/gpu-check scripts/gpu-stage \
	scripts/gpu-profile scripts/perf-table scripts/sass-waits \
	tests/check_cuda_device.c tests/check_cuda_graph.c

SUFFIXES = .cu

if HAVE_CUDA
pkglib_LTLIBRARIES = cuda/udnn_cuda.la
cuda_udnn_cuda_la_SOURCES =
cuda_udnn_cuda_la_LIBADD = $(UDNN_CUDA_LO) -L$(CUDA_HOME)/lib64 -lcudart -lstdc++
cuda_udnn_cuda_la_LDFLAGS = -module -avoid-version -shared -no-undefined \
	-export-symbols-regex '^udnn_backend_entry$$' -R$(CUDA_HOME)/lib64 \
	-Wl,--no-undefined
cuda_udnn_cuda_la_DEPENDENCIES = $(UDNN_CUDA_LO)

CUDA_NVCCFLAGS = -std=c++17 -O3 $(CUDA_TARGETS) -fvisibility=hidden \
	-Xcompiler=-Wall,-Wextra,-fno-exceptions,-fno-rtti \
	--Werror all-warnings
CUDA_COMPILE = $(LIBTOOL) $(AM_V_lt) --tag=CC $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) \
	--mode=compile $(SHELL) $(top_srcdir)/cuda/nvcc-wrap.sh $(NVCC) \
	$(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(CUDA_NVCCFLAGS)
CUDA_DEPS = $(UDNN_CUDA_H:%=$(srcdir)/%) $(srcdir)/backends/backend.h \
	$(srcdir)/include/udnn.h include/udnn_version.h

$(UDNN_CUDA_LO): $(CUDA_DEPS)
.cu.lo:
	$(AM_V_CC)$(MKDIR_P) cuda && $(CUDA_COMPILE) -c -o $@ $<

# The reference-bits solvers compute cpu/ref's bits only if every multiply
# and add rounds on its own, as C11 has it (backends/ref/fn.h).
cuda/ref_bits.lo: cuda/ref_bits.cu $(UDNN_REF_H:%=$(srcdir)/%)
	$(AM_V_CC)$(MKDIR_P) cuda && $(CUDA_COMPILE) --fmad=false -c -o $@ $(srcdir)/cuda/ref_bits.cu

MOSTLYCLEANFILES = cuda/*.lo cuda/*.o

if HAVE_CHECK
# The CUDA device suite; it skips (77) without a CUDA device. scripts/gpu-check
# runs it with check_handle and check_activation against the built plugin.
check_PROGRAMS += tests/check_cuda_device
TESTS += tests/check_cuda_device
tests_check_cuda_device_SOURCES = tests/check_cuda_device.c
tests_check_cuda_device_CFLAGS = $(SUITE_CFLAGS) -I$(CUDA_HOME)/include
tests_check_cuda_device_LDADD = $(SUITE_LDADD) -lcudart
tests_check_cuda_device_LDFLAGS = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64
# conv -> AddTensor -> ReLU -> max pool captured in a CUDA graph and replayed;
# it skips (77) without a CUDA device.
check_PROGRAMS += tests/check_cuda_graph
TESTS += tests/check_cuda_graph
tests_check_cuda_graph_SOURCES = tests/check_cuda_graph.c
tests_check_cuda_graph_CFLAGS = $(SUITE_CFLAGS) -I$(CUDA_HOME)/include
tests_check_cuda_graph_LDADD = $(SUITE_LDADD) -lcudart
tests_check_cuda_graph_LDFLAGS = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64
endif
endif
