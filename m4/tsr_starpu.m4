# TSR_CHECK_STARPU: find StarPU 1.3 or 1.4 through pkg-config, as chosen by --with-starpu.
#   auto     starpu-1.3 (Debian's, as CI uses), else starpu-1.4
#   1.3|1.4  exactly that version
#   PREFIX   an installation prefix: PREFIX/lib/pkgconfig goes first on PKG_CONFIG_PATH and
#            whichever of starpu-1.4 / starpu-1.3 it holds is used
# Sets STARPU_CFLAGS (StarPU's include directories as -isystem: CUDA 13's headers that StarPU
# includes would otherwise flood the build with deprecation warnings), STARPU_LIBS, TSR_STARPU_PC,
# TSR_STARPU_LIBDIR (for the GPU bundle), tsr_starpu_cuda=yes|no, tsr_starpu_opencl=yes|no (with
# OPENCL_LIBS) and TSR_STARPU_MINOR (3 or 4).
AC_DEFUN([TSR_CHECK_STARPU], [
  AS_CASE([$with_starpu],
    [auto|yes], [tsr_starpu_try="starpu-1.3 starpu-1.4"],
    [1.3], [tsr_starpu_try=starpu-1.3],
    [1.4], [tsr_starpu_try=starpu-1.4],
    [no], [AC_MSG_ERROR([Tessera needs StarPU: --without-starpu is not possible])],
    [/*], [
      AS_IF([test -d "$with_starpu/lib/pkgconfig"], [],
        [AC_MSG_ERROR([--with-starpu=$with_starpu: no lib/pkgconfig directory under that prefix])])
      PKG_CONFIG_PATH="$with_starpu/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
      export PKG_CONFIG_PATH
      tsr_starpu_try="starpu-1.4 starpu-1.3"],
    [AC_MSG_ERROR([--with-starpu=$with_starpu: give 1.3, 1.4 or an absolute installation prefix])])
  tsr_starpu=
  for tsr_pc in $tsr_starpu_try; do
    AC_MSG_CHECKING([for $tsr_pc])
    AS_IF([$PKG_CONFIG --exists "$tsr_pc"], [
      tsr_starpu=$tsr_pc
      AC_MSG_RESULT([yes, $($PKG_CONFIG --modversion $tsr_pc) in $($PKG_CONFIG --variable=prefix $tsr_pc)])
      break
    ], [AC_MSG_RESULT([no])])
  done
  AS_IF([test -z "$tsr_starpu"],
    [AC_MSG_ERROR([no StarPU found (tried: $tsr_starpu_try); install libstarpu-dev or give --with-starpu=PREFIX])])
  AS_IF([test "$with_starpu" != auto && test "$with_starpu" != yes && test "${with_starpu#/}" != "$with_starpu"],
    [tsr_starpu_prefix=$($PKG_CONFIG --variable=prefix $tsr_starpu)
     AS_IF([test "$(cd "$tsr_starpu_prefix" 2>/dev/null && pwd -P)" = "$(cd "$with_starpu" && pwd -P)"], [],
       [AC_MSG_ERROR([--with-starpu=$with_starpu: $tsr_starpu.pc found there names prefix $tsr_starpu_prefix])])])
  PKG_CHECK_MODULES([STARPU], [$tsr_starpu])
  # -I to -isystem: StarPU's headers (and the CUDA headers they pull in) are not ours to warn about
  STARPU_CFLAGS=$(echo " $STARPU_CFLAGS" | sed 's/ -I/ -isystem /g')
  TSR_STARPU_PC=$tsr_starpu
  TSR_STARPU_LIBDIR=$($PKG_CONFIG --variable=libdir $tsr_starpu)
  # a StarPU outside the system's library path: programs find it without LD_LIBRARY_PATH
  AS_CASE([$TSR_STARPU_LIBDIR],
    [/usr/lib|/usr/lib/*|/lib|/lib/*], [],
    [STARPU_LIBS="-Wl,-rpath,$TSR_STARPU_LIBDIR $STARPU_LIBS"])
  TSR_STARPU_MINOR=${tsr_starpu#starpu-1.}
  # Does this StarPU have CUDA? (its starpu_config.h says so)
  tsr_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $STARPU_CFLAGS"
  AC_MSG_CHECKING([whether $tsr_starpu was built with CUDA])
  AC_PREPROC_IFELSE([AC_LANG_PROGRAM([[#include <starpu_config.h>
#ifndef STARPU_USE_CUDA
#error no CUDA
#endif]])], [tsr_starpu_cuda=yes], [tsr_starpu_cuda=no])
  AC_MSG_RESULT([$tsr_starpu_cuda])
  # Does it have OpenCL? Debian's 1.3 does: Tessera's own OpenCL kernels then call the OpenCL API
  # (libOpenCL, from ocl-icd-opencl-dev), and POCL gives every machine such a device.
  AC_MSG_CHECKING([whether $tsr_starpu was built with OpenCL])
  AC_PREPROC_IFELSE([AC_LANG_PROGRAM([[#include <starpu_config.h>
#ifndef STARPU_USE_OPENCL
#error no OpenCL
#endif]])], [tsr_starpu_opencl=yes], [tsr_starpu_opencl=no])
  AC_MSG_RESULT([$tsr_starpu_opencl])
  OPENCL_LIBS=""
  AS_IF([test "x$tsr_starpu_opencl" = xyes],
    [AC_CHECK_HEADER([CL/cl.h], [],
       [AC_MSG_ERROR([$tsr_starpu has OpenCL but CL/cl.h was not found (Debian: apt-get install opencl-c-headers)])])
     tsr_save_LIBS=$LIBS
     AC_SEARCH_LIBS([clEnqueueNDRangeKernel], [OpenCL], [],
       [AC_MSG_ERROR([$tsr_starpu has OpenCL but libOpenCL was not found (Debian: apt-get install ocl-icd-opencl-dev)])])
     AS_IF([test "x$ac_cv_search_clEnqueueNDRangeKernel" != "xnone required"],
       [OPENCL_LIBS=$ac_cv_search_clEnqueueNDRangeKernel])
     LIBS=$tsr_save_LIBS])
  AC_SUBST([OPENCL_LIBS])
  AM_CONDITIONAL([TSR_STARPU_OPENCL], [test "x$tsr_starpu_opencl" = xyes])
  CPPFLAGS=$tsr_save_CPPFLAGS
  AC_SUBST([TSR_STARPU_PC])
  AC_SUBST([TSR_STARPU_LIBDIR])
  AM_CONDITIONAL([TSR_STARPU_CUDA], [test "x$tsr_starpu_cuda" = xyes])
])
