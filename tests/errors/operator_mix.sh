#!/bin/sh
# tests/errors/operator_mix.sh: privileges and reduction operators are distinct types, so mixing
# them is a compile error (tessera.h, "privileges"). Each case compiles a few lines against
# runtime/tessera.h; the first, written correctly, shows that the others fail for the mix alone.
# One TAP line per case.
here=$(cd "$(dirname "$0")" && pwd)
inc=$here/../../runtime
cc=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/operator-mix.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..4"

i=0
case_() {   # name, expect (ok or error), the body of a function f(t, p, r, res)
	i=$((i + 1))
	name=$1
	expect=$2
	cat >"$tmp/case.c" <<CASE
#include <tessera.h>
int f(tsr_task_t t, tsr_partition_t p, tsr_region_t r, tsr_future_t *res)
{
	$3
}
CASE
	if "$cc" -std=gnu11 -fsyntax-only -I"$inc" "$tmp/case.c" >"$tmp/out" 2>&1; then
		got=ok
	else
		got=error
	fi
	if [ "$got" = "$expect" ]; then
		echo "ok $i - $name"
	else
		echo "not ok $i - $name (compiler: $got, expected $expect)"
		sed 's/^/# /' "$tmp/out"
	fi
}

case_ "operator and privilege in their places compile" ok \
	'tsr_req_t q = tsr_req_region(r, TSR_REDUCE(TSR_MAX), TSR_FIELDS(0));
	 return tsr_index_launch(t, tsr_box1(0, 1), 1, &q, 0, 0, TSR_MAX, res);'
case_ "a privilege passed as the operator is a compile error" error \
	'tsr_req_t q = tsr_req_part(p, TSR_READ, TSR_FIELDS(0));
	 return tsr_index_launch(t, tsr_box1(0, 1), 1, &q, 0, 0, TSR_REDUCE(TSR_MAX), res);'
case_ "an operator passed as the privilege is a compile error" error \
	'tsr_req_t q = tsr_req_region(r, TSR_MAX, TSR_FIELDS(0));
	 return tsr_launch(t, 1, &q, 0, 0, res);'
case_ "TSR_REDUCE of a number is a compile error" error \
	'tsr_req_t q = tsr_req_region(r, TSR_REDUCE(4), TSR_FIELDS(0));
	 return tsr_launch(t, 1, &q, 0, 0, res);'
