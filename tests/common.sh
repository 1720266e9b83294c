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
