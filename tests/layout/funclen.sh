#!/bin/sh
# tests/layout/funclen.sh: no function of runtime/ or apps/ is longer than 100 lines (from its
# opening brace to its closing one, at the start of a line as .clang-format puts them): the
# runtime and the apps are the code newcomers read, and a long function is split by step.
src=${top_srcdir:-.}
max=100
echo "1..2"
# The functions of the files given over max lines, as file:line: n lines: signature.
long_functions() {
	for f in "$@"; do
		[ -f "$f" ] || continue
		awk -v f="${f#"$src"/}" -v max="$max" '
			/^\{/ { start = NR; name = prev }
			/^\}/ && start { n = NR - start + 1; if (n > max) printf "%s:%d: %d lines: %s\n", f, start, n, name; start = 0 }
			{ prev = $0 }' "$f"
	done
}
n=0
for dir in runtime apps; do
	n=$((n + 1))
	if [ "$dir" = runtime ]; then
		long=$(long_functions "$src"/runtime/*.c "$src"/runtime/*.cu)
	else
		long=$(long_functions "$src"/apps/*/*.c "$src"/apps/*/*.cu "$src"/apps/*/*/*.cc)
	fi
	if [ -z "$long" ]; then
		echo "ok $n - no function of $dir/ is over $max lines"
	else
		echo "$long" | sed 's/^/# /'
		echo "not ok $n - functions of $dir/ over $max lines (split them by step)"
	fi
done
