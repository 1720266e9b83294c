#!/bin/sh
# tests/layout/funclen.sh: no function of apps/ is longer than 100 lines (from its opening brace
# to its closing one, at the start of a line as .clang-format puts them): the apps are the code
# newcomers read first, and a long function is split by step.
src=${top_srcdir:-.}
max=100
echo "1..1"
long=$(for f in "$src"/apps/*/*.c "$src"/apps/*/*.cu "$src"/apps/*/*/*.cc; do
	[ -f "$f" ] || continue
	awk -v f="${f#"$src"/}" -v max="$max" '
		/^\{/ { start = NR; name = prev }
		/^\}/ && start { n = NR - start + 1; if (n > max) printf "%s:%d: %d lines: %s\n", f, start, n, name; start = 0 }
		{ prev = $0 }' "$f"
done)
if [ -z "$long" ]; then
	echo "ok 1 - no function of apps/ is over $max lines"
else
	echo "$long" | sed 's/^/# /'
	echo "not ok 1 - functions of apps/ over $max lines (split them by step)"
fi
