# TSR_CHECK_MPI: StarPU-MPI (the starpumpi package of the StarPU chosen by TSR_CHECK_STARPU) and an
# MPI through pkg-config (Open MPI's ompi-c, else mpi-c), as chosen by --with-mpi:
#   auto  several ranks when both are found (Debian 12: libstarpu-dev and libopenmpi-dev)
#   yes   fail if either is missing
#   no    one process only
# Sets STARPU_MPI_CFLAGS/LIBS, MPI_CFLAGS/LIBS, TSR_MPI_PC (for tessera.pc), MPIRUN, defines
# TSR_HAVE_MPI and the conditional TSR_MPI.
AC_DEFUN([TSR_CHECK_MPI], [
  tsr_mpi=no
  TSR_MPI_PC=
  AS_IF([test "x$with_mpi" != xno], [
    tsr_mpi_starpu=starpumpi-1.$TSR_STARPU_MINOR
    PKG_CHECK_MODULES([STARPU_MPI], [$tsr_mpi_starpu], [tsr_mpi_have_starpu=yes], [tsr_mpi_have_starpu=no])
    tsr_mpi_pc=
    for tsr_pc in ompi-c mpi-c; do
      AS_IF([test -z "$tsr_mpi_pc" && $PKG_CONFIG --exists $tsr_pc], [tsr_mpi_pc=$tsr_pc])
    done
    AS_IF([test "x$tsr_mpi_have_starpu" = xyes && test -n "$tsr_mpi_pc"], [
      PKG_CHECK_MODULES([MPI], [$tsr_mpi_pc])
      STARPU_MPI_CFLAGS=$(echo " $STARPU_MPI_CFLAGS" | sed 's/ -I/ -isystem /g')
      MPI_CFLAGS=$(echo " $MPI_CFLAGS" | sed 's/ -I/ -isystem /g')
      TSR_MPI_PC="$tsr_mpi_starpu $tsr_mpi_pc"
      tsr_mpi=yes])
    AS_IF([test "x$with_mpi" = xyes && test "x$tsr_mpi" != xyes],
      [AC_MSG_ERROR([--with-mpi: needs $tsr_mpi_starpu.pc (libstarpu-dev) and ompi-c.pc or mpi-c.pc (libopenmpi-dev)])])
  ])
  AC_PATH_PROG([MPIRUN], [mpirun], [])
  AS_IF([test "x$tsr_mpi" = xyes], [AC_DEFINE([TSR_HAVE_MPI], [1], [Tessera can run on several MPI ranks (StarPU-MPI)])])
  AC_SUBST([TSR_MPI_PC])
  AC_SUBST([MPIRUN])
  AM_CONDITIONAL([TSR_MPI], [test "x$tsr_mpi" = xyes])
])
