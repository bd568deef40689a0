# UDNN_CHECK_ONEDNN: --with-onednn[=DIR]; oneDNN 2.x has no pkg-config file,
# so the header and library are probed directly. Default: use it if found.
AC_DEFUN([UDNN_CHECK_ONEDNN], [
  AC_ARG_WITH([onednn],
    [AS_HELP_STRING([--with-onednn@<:@=DIR@:>@],
      [use oneDNN as a CPU fast path (default: if found)])],
    [], [with_onednn=check])
  udnn_onednn_summary=no
  ONEDNN_CPPFLAGS=
  ONEDNN_LIBS=
  AS_IF([test "x$with_onednn" != xno], [
    udnn_save_CPPFLAGS=$CPPFLAGS
    udnn_save_LDFLAGS=$LDFLAGS
    udnn_onednn_ldflags=
    AS_CASE([$with_onednn], [yes|check], [],
      [ONEDNN_CPPFLAGS="-I$with_onednn/include"; udnn_onednn_ldflags="-L$with_onednn/lib"])
    CPPFLAGS="$CPPFLAGS $ONEDNN_CPPFLAGS"
    LDFLAGS="$LDFLAGS $udnn_onednn_ldflags"
    udnn_have_onednn=no
    AC_CHECK_HEADERS([dnnl.h],
      [AC_CHECK_LIB([dnnl], [dnnl_engine_create], [udnn_have_onednn=yes])])
    CPPFLAGS=$udnn_save_CPPFLAGS
    LDFLAGS=$udnn_save_LDFLAGS
    AS_IF([test "x$udnn_have_onednn" = xyes], [
      ONEDNN_LIBS="$udnn_onednn_ldflags -ldnnl"
      udnn_onednn_summary=yes
      AC_DEFINE([UDNN_HAVE_ONEDNN], [1], [Define to 1 when oneDNN is used.])
    ], [
      AS_IF([test "x$with_onednn" != xcheck],
        [AC_MSG_ERROR([--with-onednn was given but oneDNN (dnnl.h, -ldnnl) was not found])])
    ])
  ])
  AC_SUBST([ONEDNN_CPPFLAGS])
  AC_SUBST([ONEDNN_LIBS])
  AM_CONDITIONAL([HAVE_ONEDNN], [test "x$udnn_onednn_summary" = xyes])
])
