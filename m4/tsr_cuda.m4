# TSR_CHECK_CUDA: find nvcc under $CUDA_HOME (or PATH) when --enable-cuda is yes or auto.
# Sets NVCC, CUDA_CFLAGS, CUDA_LIBS, NVCCFLAGS, the conditional TSR_CUDA and tsr_cuda=yes|no.
AC_DEFUN([TSR_CHECK_CUDA], [
  tsr_cuda=no
  AS_IF([test "x$enable_cuda" != xno], [
    AC_PATH_PROG([NVCC], [nvcc], [], [$CUDA_HOME/bin$PATH_SEPARATOR$PATH])
    AS_IF([test -n "$NVCC"], [
      tsr_cuda=yes
      CUDA_CFLAGS="-I$CUDA_HOME/include"
      tsr_cuda_libdir=$CUDA_HOME/lib64
      AS_IF([test -d "$tsr_cuda_libdir"], [], [tsr_cuda_libdir=$CUDA_HOME/lib])
      CUDA_LIBS="-L$tsr_cuda_libdir -Wl,-rpath,$tsr_cuda_libdir -lcudart -lstdc++"
      NVCCFLAGS=${NVCCFLAGS:-"-O3 -std=c++17 -arch=sm_90"}
    ], [
      AS_IF([test "x$enable_cuda" = xyes], [AC_MSG_ERROR([--enable-cuda given but nvcc not found under $CUDA_HOME or PATH])])
    ])
  ])
  AS_IF([test "x$tsr_cuda" = xyes], [AC_DEFINE([TSR_HAVE_CUDA], [1], [CUDA variants are compiled])])
  AC_SUBST([NVCC]) AC_SUBST([CUDA_CFLAGS]) AC_SUBST([CUDA_LIBS]) AC_SUBST([NVCCFLAGS])
  AM_CONDITIONAL([TSR_CUDA], [test "x$tsr_cuda" = xyes])
])
