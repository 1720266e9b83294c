# tests/mpi/common.sh: sourced by the several-ranks tests (tests/mpi/*.sh). It finds mpirun
# (MPIRUN from configure, through make check's environment; else the one on PATH), prints the
# TAP skip plan and exits where there is none or where Tessera was built without MPI, and
# defines mpi_run NP TIMEOUT LOG PROGRAM ARGS...: the program on NP ranks (oversubscribed, output
# of every rank tagged [1,RANK]), killed after TIMEOUT seconds; its status is mpirun's (nonzero if
# any rank failed), 124 or 137 for a run that did not end in time. Standard output goes to LOG,
# standard error to LOG.err (apart: Open MPI may splice a line of one into a line of the other).
# `scaled SECONDS` prints SECONDS times CK_TIMEOUT_MULTIPLIER (the tests' one knob for every time
# limit: 4 under make check, 1 where unset; Makefile.am), rounded up: the scripts' defaults are
# sized for a quiet machine and pass through it; a limit given explicitly (TSR_MPI_TIMEOUT...) is
# taken as it is.
b=${top_builddir:-.}
scaled() {
	awk -v s="$1" -v m="${CK_TIMEOUT_MULTIPLIER:-1}" \
		'BEGIN { if (!(m + 0 > 0)) m = 1; v = s * m; printf "%d\n", v == int(v) ? v : int(v) + 1 }'
}
mpirun=${MPIRUN:-$(command -v mpirun 2>/dev/null)}
if [ -z "$mpirun" ] || [ ! -x "$mpirun" ]; then
	echo "1..0 # SKIP no mpirun (configure found none; install openmpi-bin)"
	exit 0
fi
if ! grep -q '^#define TSR_HAVE_MPI 1' "$b/config.h" 2>/dev/null; then
	echo "1..0 # SKIP Tessera was built without MPI (configure found no StarPU-MPI or MPI)"
	exit 0
fi
# CI runs as root; Open MPI refuses root without these.
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
# Options, not the environment, choose what runs; StarPU stays quiet and keeps its calibration
# files out of the user's ~/.starpu.
unset TSR_SCHED TSR_NCPU TSR_NCUDA TSR_TIMELINE TSR_DAG TSR_STATS TSR_MPI STARPU_SCHED STARPU_NCPU
STARPU_SILENT=1
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/tsr-mpi.XXXXXX") || exit 99
export STARPU_SILENT STARPU_HOME
trap 'rm -rf "$STARPU_HOME"' EXIT
tmp=$STARPU_HOME
# Ranks that start together in a new STARPU_HOME calibrate the bus together, and one can read the
# file another is writing (an assertion in check_bus_affinity_file, seen in CI): one process
# calibrates first, in the environment the ranks get.
"$b/tessera-info" >/dev/null 2>&1

mpi_run() {
	mpi_start "$@"
	wait $!
}

# mpi_run in the background: $! is the timeout process (TERM it to end the run; the status is then 143).
mpi_start() {
	np=$1
	limit=$2
	log=$3
	shift 3
	# what runs, as a TAP comment (make check shows it): a run can take minutes on a busy machine
	echo "# np $np: ${1##*/} $(shift && echo "$*")"
	timeout -k 10 "$limit" "$mpirun" -np "$np" --oversubscribe --tag-output \
		-x STARPU_SILENT -x STARPU_HOME "$@" >"$log" 2>"$log.err" &
}

# The lines of rank R in a log of mpi_run, without the tag. Under load mpirun's --tag-output now
# and then starts a line with a cut tag before the whole one ("[1,1]<stdou[1,1]<stdout>:0 of 980
# programs failed"; a fresh CI run beside another build failed so): cut tags are skipped.
rank_lines() {
	sed -n "s/^\(\[1,[0-9]*\]<std[a-z]*\)*\[1,$2\]<std[a-z]*>://p" "$1"
}

# How many of a log's NP ranks printed a line that matches PATTERN (grep): ranks_matching LOG NP PATTERN.
ranks_matching() {
	n=0
	r=0
	while [ $r -lt "$2" ]; do
		rank_lines "$1" $r | grep -q "$3" && n=$((n + 1))
		r=$((r + 1))
	done
	echo $n
}

# A log's last lines, and its standard error's, as TAP comments (for a failure).
show_log() {
	tail -n "${2:-20}" "$1" | sed 's/^/#   /'
	tail -n "${2:-20}" "$1.err" 2>/dev/null | sed 's/^/#   (stderr) /'
}

# report STATUS NAME LOG: the TAP line of the next test (its number in i), ok where STATUS is 0,
# else not ok and the end of LOG. why STATUS: what a run's status says, for the TAP line.
report() {
	i=$((${i:-0} + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $i - $2"
	else
		echo "not ok $i - $2"
		show_log "$3"
	fi
}
why() {
	case $1 in
	124 | 137) echo "did not end in ${limit} s (killed)" ;;
	*) echo "mpirun exit status $1" ;;
	esac
}
