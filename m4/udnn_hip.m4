# UDNN_CHECK_HIP: --with-hip[=DIR] finds hipcc for the HIP backend plugin;
# --with-hip-targets names the AMD offload architectures.
AC_DEFUN([UDNN_CHECK_HIP], [
  AC_ARG_WITH([hip],
    [AS_HELP_STRING([--with-hip@<:@=DIR@:>@],
      [build the HIP backend plugin (DIR holds bin/hipcc; default: PATH)])],
    [], [with_hip=no])
  AC_ARG_WITH([hip-targets],
    [AS_HELP_STRING([--with-hip-targets=LIST],
      [hipcc --offload-arch list (default: gfx906,gfx908,gfx90a,gfx1030)])],
    [HIP_TARGETS=$withval], [HIP_TARGETS="gfx906,gfx908,gfx90a,gfx1030"])
  udnn_hip_summary=no
  AS_IF([test "x$with_hip" != xno], [
    udnn_hip_path=$PATH
    AS_IF([test "x$with_hip" != xyes], [udnn_hip_path="$with_hip/bin$PATH_SEPARATOR$PATH"])
    AC_PATH_PROG([HIPCC], [hipcc], [no], [$udnn_hip_path])
    AS_IF([test "x$HIPCC" = xno], [AC_MSG_ERROR([--with-hip: hipcc not found])])
    udnn_hip_summary="yes ($HIPCC; the backend plugin arrives with its issue)"
  ])
  AC_SUBST([HIP_TARGETS])
  AM_CONDITIONAL([HAVE_HIP], [test "x$udnn_hip_summary" != xno])
])
