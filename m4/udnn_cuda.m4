# UDNN_CHECK_CUDA: --with-cuda[=DIR] finds nvcc and the CUDA runtime for the
# CUDA backend plugin; --with-cuda-targets overrides the GPU targets.
AC_DEFUN([UDNN_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [build the CUDA backend plugin (DIR defaults to /usr/local/cuda)])],
    [], [with_cuda=no])
  AC_ARG_WITH([cuda-targets],
    [AS_HELP_STRING([--with-cuda-targets=LIST],
      [nvcc -gencode flags (default: sm_80, sm_90 and compute_90 PTX)])],
    [CUDA_TARGETS=$withval],
    [CUDA_TARGETS="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"])
  udnn_cuda_summary=no
  CUDA_HOME=
  AS_IF([test "x$with_cuda" != xno], [
    AS_IF([test "x$with_cuda" = xyes], [CUDA_HOME=/usr/local/cuda], [CUDA_HOME=$with_cuda])
    AC_PATH_PROG([NVCC], [nvcc], [no], [$CUDA_HOME/bin$PATH_SEPARATOR$PATH])
    AS_IF([test "x$NVCC" = xno], [AC_MSG_ERROR([--with-cuda: nvcc not found under $CUDA_HOME/bin])])
    AS_IF([test ! -f "$CUDA_HOME/include/cuda_runtime.h"],
      [AC_MSG_ERROR([--with-cuda: $CUDA_HOME/include/cuda_runtime.h not found])])
    udnn_cuda_summary="yes ($CUDA_HOME: udnn_cuda.so)"
  ])
  AC_SUBST([CUDA_HOME])
  AC_SUBST([CUDA_TARGETS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$udnn_cuda_summary" != xno])
])
