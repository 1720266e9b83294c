#!/bin/sh
# tests/layout/asserts.sh: runtime/ states its invariants as assertions (tsr__assert, internal.h),
# at least 3 per 1,000 lines of runtime/*.c and runtime/*.h (libuv has about 9, hwloc 8, StarPU's
# core 18). Counted: the lines that are a tsr__assert statement; the macro's own lines are not.
src=${top_srcdir:-.}
min=3
echo "1..1"
lines=$(cat "$src"/runtime/*.c "$src"/runtime/*.h | wc -l)
asserts=$(cat "$src"/runtime/*.c "$src"/runtime/*.h | grep -c '^[[:space:]]*tsr__assert(')
per=$(awk -v a="$asserts" -v l="$lines" 'BEGIN { printf "%.1f", 1000 * a / l }')
echo "# $asserts assertions in $lines lines of runtime/: $per per 1,000"
if [ $((asserts * 1000)) -ge $((min * lines)) ]; then
	echo "ok 1 - runtime/ has at least $min assertions per 1,000 lines"
else
	echo "not ok 1 - runtime/ has fewer than $min assertions per 1,000 lines (tsr__assert)"
fi
