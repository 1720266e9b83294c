#!/bin/sh
# tests/layout/env.sh: the environment switches have one table (runtime/env.c). The README's table
# holds each row tessera-info --env prints from it, word for word, and no file of runtime/ but
# env.c reads a TSR_ variable itself. tessera-info says what a run takes and where each value
# comes from (--config: a flag over its variable over StarPU's), lists the policies for
# --sched help and TSR_SCHED=help, and gives its version.
src=${top_srcdir:-.}
build=${top_builddir:-.}
echo "1..6"
rows=$("$build/tessera-info" --env | grep '^| TSR_')
missing=$(echo "$rows" | while IFS= read -r row; do
	grep -qxF -- "$row" "$src/README" || echo "$row"
done)
if [ -n "$rows" ] && [ -z "$missing" ]; then
	echo "ok 1 - README's table holds the $(echo "$rows" | wc -l) switches tessera-info --env prints"
else
	echo "$missing" | sed 's/^/# not in README: /'
	echo "not ok 1 - README's table differs from tessera-info --env"
fi
readers=$(grep -ln 'getenv("TSR_' "$src"/runtime/*.c | grep -v '/env\.c$')
if [ -z "$readers" ]; then
	echo "ok 2 - only runtime/env.c reads TSR_ variables"
else
	echo "$readers" | sed 's/^/# reads a TSR_ variable itself: /'
	echo "not ok 2 - a file of runtime/ reads a TSR_ variable outside env.c"
fi
info=$build/tessera-info
log=$(mktemp "${TMPDIR:-/tmp}/tsr-env.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
# check NUMBER NAME PATTERN... -- COMMAND...: the command succeeds and prints every pattern
check() {
	num=$1
	name=$2
	shift 2
	patterns=
	while [ "$1" != -- ]; do
		patterns="$patterns
$1"
		shift
	done
	shift
	"$@" >"$log" 2>&1
	rc=$?
	missing=$(echo "$patterns" | while IFS= read -r p; do [ -z "$p" ] || grep -q -- "$p" "$log" || echo "$p"; done)
	if [ $rc -eq 0 ] && [ -z "$missing" ]; then
		echo "ok $num - $name"
	else
		echo "not ok $num - $name (exit $rc)"
		echo "$missing" | sed 's/^/# missing: /'
		sed 's/^/# /' "$log"
	fi
}
check 3 "tessera-info --config: each value and its source, the flag over the variables" \
	"^  TSR_NCPU  *--ncpu  *1  *from --ncpu$" "^  TSR_SCHED  *--sched  *eager  *from TSR_SCHED$" \
	"^  TSR_NCUDA  *--ncuda  *0  *from STARPU_NCUDA$" "^  TSR_STATS  *--stats  *0  *from default$" \
	"^  workers: 1 (1 CPU, 0 CUDA" "^  policy in use: eager$" -- \
	env TSR_NCPU=2 STARPU_NCPU=2 TSR_SCHED=eager STARPU_SCHED=dmda STARPU_NCUDA=0 "$info" --ncpu 1 --config
check 4 "tessera-info --sched help lists the policies, Tessera's first" "^  tsr-locality " "^  tsr-critpath " "^  eager " -- \
	"$info" --sched help
check 5 "TSR_SCHED=help: the same list" "^  tsr-locality " "^  lws " -- env TSR_SCHED=help "$info"
check 6 "tessera-info --version" "^tessera-info (Tessera) [0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*$" -- "$info" --version
