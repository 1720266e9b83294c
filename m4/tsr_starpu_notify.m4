# TSR_CHECK_STARPU_NOTIFY (after TSR_CHECK_STARPU): may Tessera hand this StarPU explicit task
# dependences (runtime/order.c)? Since StarPU commit b1d707073 (every 1.4 release and master),
# declaring a successor on a task that is terminating races with that task's notify loop: the
# successor is notified twice, an abort in _starpu_notify_cg or a task that starts before its
# other predecessors end (tools/starpu-1.4-notify-cg.patch; tests/starpu/test_notify_race.c).
# StarPU 1.3 never had the race; a StarPU built by tools/build-starpu.sh carries the patch, which
# defines STARPU_TSR_NOTIFY_CG_FIX in the installed starpu_config.h. Either way this defines
# TSR_STARPU_NOTIFY_FIXED; otherwise Tessera orders views through StarPU's implicit dependences
# and refuses TSR_DEPS=explicit. The header is what the library was built with: configure reads
# the marker there rather than probing a race at run time, which could pass by luck.
# Where the header has the patch's marker, tsr_init also checks at run time that the libstarpu
# loaded exports the patch's starpu_tsr_notify_cg_fix (else it falls back to implicit and says so).
# A StarPU fixed some other way (a later release, a distribution's patch) can be declared so
# (then nothing is checked at run time):
#   ./configure tsr_cv_starpu_notify_fixed=yes
# Sets tsr_starpu_deps for configure's summary, and TSR_STARPU_PCDIR, the directory of StarPU's
# .pc file (tests/install puts it on PKG_CONFIG_PATH: tessera.pc requires StarPU's .pc).
AC_DEFUN([TSR_CHECK_STARPU_NOTIFY], [
  tsr_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $STARPU_CFLAGS"
  AC_CACHE_CHECK([whether $tsr_starpu may be given explicit dependences (1.3, or the notify fix)],
    [tsr_cv_starpu_notify_fixed],
    [AC_PREPROC_IFELSE([AC_LANG_PROGRAM([[#include <starpu_config.h>
#if !(STARPU_MAJOR_VERSION == 1 && STARPU_MINOR_VERSION <= 3) && !defined(STARPU_TSR_NOTIFY_CG_FIX)
#error successors declared on a terminating task race on this StarPU
#endif]])], [tsr_cv_starpu_notify_fixed=yes], [tsr_cv_starpu_notify_fixed=no])])
  CPPFLAGS=$tsr_save_CPPFLAGS
  # The patch's marker in the header: then tsr_init also checks that the libstarpu it runs with
  # exports the patch's starpu_tsr_notify_cg_fix (runtime/order.c), since one without the fix can be
  # loaded in place of this one (LD_LIBRARY_PATH).
  CPPFLAGS="$CPPFLAGS $STARPU_CFLAGS"
  AC_PREPROC_IFELSE([AC_LANG_PROGRAM([[#include <starpu_config.h>
#ifndef STARPU_TSR_NOTIFY_CG_FIX
#error no marker
#endif]])], [tsr_starpu_notify_marker=yes], [tsr_starpu_notify_marker=no])
  CPPFLAGS=$tsr_save_CPPFLAGS
  AS_IF([test "x$tsr_cv_starpu_notify_fixed" = xyes],
    [tsr_starpu_deps="explicit by default (StarPU 1.3, or 1.4 with the notify fix)"
     AC_DEFINE([TSR_STARPU_NOTIFY_FIXED], [1],
       [StarPU may be given explicit dependences: 1.3, or 1.4 with tools/starpu-1.4-notify-cg.patch])
     AS_IF([test "x$tsr_starpu_notify_marker" = xyes],
       [tsr_starpu_deps="$tsr_starpu_deps, checked at run time"
        AC_DEFINE([TSR_STARPU_NOTIFY_MARKER], [1],
          [StarPU's notify fix is tools/starpu-1.4-notify-cg.patch: tsr_init checks that the
           libstarpu loaded exports its marker, starpu_tsr_notify_cg_fix])])],
    [tsr_starpu_deps="implicit only ($tsr_starpu lacks the notify fix)"
     AC_MSG_WARN([$tsr_starpu lacks the notify fix (tools/starpu-1.4-notify-cg.patch): Tessera will order tasks through StarPU's implicit dependences, and TSR_DEPS=explicit fails tsr_init. Build StarPU with tools/build-starpu.sh to get the fix.])])
  TSR_STARPU_PCDIR=$($PKG_CONFIG --variable=pcfiledir $tsr_starpu)
  AC_SUBST([TSR_STARPU_PCDIR])
])
