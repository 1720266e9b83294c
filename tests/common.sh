# tests/common.sh: sourced by the scripts that check a program's runs in TAP (circuit/, install/,
# starpu/). report NAME STATUS prints the next test's line: ok where STATUS is 0, else not ok, the
# last report_tail (default 20) lines of the files in report_logs as comments, and failed=1.
n=0
failed=0
report() {
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		cat $report_logs 2>/dev/null | tail -n "${report_tail:-20}" | sed 's/^/# /'
		failed=1
	fi
}

# install_prefix: sets prefix to TSR_PREFIX (an installation made before) or installs the build
# tree ($builddir) into $tmp/prefix, and reports which as the next test (tests/install/).
install_prefix() {
	if [ -n "$TSR_PREFIX" ]; then
		prefix=$TSR_PREFIX
		echo "using the installation in $prefix" >"$tmp/log"
		report "installed in $prefix by make install" 0
		return
	fi
	prefix=$tmp/prefix
	# A make of our own inside make check: it must not join the outer make's job server. That
	# install writes the build tree's tessera.pc for DIR, which is then written back for the
	# configured prefix; both scripts of tests/install do it, so they take turns (flock).
	(
		unset MAKEFLAGS MFLAGS MAKELEVEL
		! command -v flock >/dev/null || flock 9
		${MAKE:-make} -C "$builddir" install prefix="$prefix" >"$tmp/log" 2>&1
		rc=$?
		${MAKE:-make} -C "$builddir" tessera.pc >/dev/null 2>&1
		exit $rc
	) 9>"$builddir/tests/install/install.lock"
	report "make install prefix=DIR" $?
}
