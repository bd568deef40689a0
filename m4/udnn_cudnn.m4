# UDNN_CHECK_CUDNN: --with-cudnn[=DIR] gives udnn-bench its peers for the
# CUDA backend, cuDNN and cuBLAS (tools/bench_cudnn.c). It needs --with-cuda
# (call it after UDNN_CHECK_CUDA). DIR defaults to the CUDA toolkit's
# (CUDA_HOME); it may also be a tree with include/ and lib/, as in the
# nvidia-cudnn Python wheel, whose lib/ holds only the versioned
# libcudnn.so.9: then that file is linked by name. cuBLAS comes from the
# toolkit. Only udnn-bench links them: libudnn and its plugins never do.
AC_DEFUN([UDNN_CHECK_CUDNN], [
  AC_ARG_WITH([cudnn],
    [AS_HELP_STRING([--with-cudnn@<:@=DIR@:>@],
      [udnn-bench --compare runs the CUDA backend's problems through cuDNN and
       cuBLAS too (needs --with-cuda; DIR defaults to the CUDA toolkit's)])],
    [], [with_cudnn=no])
  udnn_cudnn_summary=no
  CUDNN_CPPFLAGS=
  CUDNN_LIBS=
  CUDNN_LDFLAGS=
  AS_IF([test "x$with_cudnn" != xno], [
    AS_IF([test "x$udnn_cuda_summary" = xno],
      [AC_MSG_ERROR([--with-cudnn needs --with-cuda (cuDNN is the CUDA backend's peer)])])
    AS_IF([test "x$with_cudnn" = xyes], [udnn_cudnn_dir=$CUDA_HOME], [udnn_cudnn_dir=$with_cudnn])
    AC_MSG_CHECKING([for cudnn.h])
    AS_IF([test -f "$udnn_cudnn_dir/include/cudnn.h"],
      [AC_MSG_RESULT([$udnn_cudnn_dir/include])],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--with-cudnn: $udnn_cudnn_dir/include/cudnn.h not found])])

    dnl the library: libcudnn.so, else the versioned file alone (the wheel's)
    AC_MSG_CHECKING([for the cuDNN library])
    udnn_cudnn_libdir=
    udnn_cudnn_lib=
    for udnn_d in "$udnn_cudnn_dir/lib64" "$udnn_cudnn_dir/lib"; do
      AS_IF([test -f "$udnn_d/libcudnn.so"],
        [udnn_cudnn_libdir=$udnn_d; udnn_cudnn_lib=-lcudnn; break])
      for udnn_f in "$udnn_d"/libcudnn.so.[[0-9]]*; do
        AS_IF([test -f "$udnn_f"],
          [udnn_cudnn_libdir=$udnn_d; udnn_cudnn_lib="-Wl,-l:`basename $udnn_f`"; break])
      done
      test -n "$udnn_cudnn_lib" && break
    done
    AS_IF([test -z "$udnn_cudnn_lib"],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--with-cudnn: no libcudnn.so under $udnn_cudnn_dir/lib64 or $udnn_cudnn_dir/lib])])
    AC_MSG_RESULT([$udnn_cudnn_libdir ($udnn_cudnn_lib)])

    AC_MSG_CHECKING([for cuBLAS])
    udnn_cublas_libdir=
    for udnn_d in "$CUDA_HOME/lib64" "$CUDA_HOME/lib" "$udnn_cudnn_libdir"; do
      AS_IF([test -f "$udnn_d/libcublas.so"], [udnn_cublas_libdir=$udnn_d; break])
    done
    AS_IF([test -z "$udnn_cublas_libdir" || test ! -f "$CUDA_HOME/include/cublas_v2.h"],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--with-cudnn: cuBLAS (cublas_v2.h, libcublas.so) not found under $CUDA_HOME])])
    AC_MSG_RESULT([$udnn_cublas_libdir])

    dnl each directory once; -R: where they are found at run time
    dnl (RUNPATH: LD_LIBRARY_PATH still comes first)
    CUDNN_CPPFLAGS="-I$udnn_cudnn_dir/include"
    AS_IF([test "$udnn_cudnn_dir" != "$CUDA_HOME"],
      [CUDNN_CPPFLAGS="$CUDNN_CPPFLAGS -I$CUDA_HOME/include"])
    CUDNN_LIBS=
    CUDNN_LDFLAGS=-Wl,--enable-new-dtags
    for udnn_d in "$udnn_cudnn_libdir" "$udnn_cublas_libdir" "$CUDA_HOME/lib64"; do
      AS_CASE([" $CUDNN_LIBS "], [*" -L$udnn_d "*], [],
        [CUDNN_LIBS="$CUDNN_LIBS -L$udnn_d"; CUDNN_LDFLAGS="$CUDNN_LDFLAGS -R$udnn_d"])
    done
    CUDNN_LIBS="$CUDNN_LIBS $udnn_cudnn_lib -lcublas -lcudart"

    dnl a program that calls both must compile and link
    udnn_save_CPPFLAGS=$CPPFLAGS
    udnn_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $CUDNN_CPPFLAGS"
    LIBS="$CUDNN_LIBS $LIBS"
    AC_MSG_CHECKING([whether a program links cuDNN and cuBLAS])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cudnn.h>
#include <cublas_v2.h>]],
        [[cublasHandle_t b; cudnnHandle_t h;
          return (int)cudnnGetVersion() + (int)cudnnCreate(&h) + (int)cublasCreate(&b);]])],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--with-cudnn: cannot link a program with $CUDNN_LIBS (config.log says why)])])
    CPPFLAGS=$udnn_save_CPPFLAGS
    LIBS=$udnn_save_LIBS

    udnn_cudnn_version=`sed -n 's/^#define CUDNN_\(MAJOR\|MINOR\|PATCHLEVEL\) *\(@<:@0-9@:>@*\).*/\2/p' \
      "$udnn_cudnn_dir/include/cudnn_version.h" 2>/dev/null | tr '\n' . | sed 's/\.$//'`
    udnn_cudnn_summary="yes (cuDNN ${udnn_cudnn_version:-?} in $udnn_cudnn_libdir, cuBLAS in $udnn_cublas_libdir: udnn-bench only)"
  ])
  AC_SUBST([CUDNN_CPPFLAGS])
  AC_SUBST([CUDNN_LIBS])
  AC_SUBST([CUDNN_LDFLAGS])
  AM_CONDITIONAL([HAVE_CUDNN], [test "x$udnn_cudnn_summary" != xno])
])
