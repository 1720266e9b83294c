#!/bin/sh
# tests/layout/env.sh: the environment switches have one table (runtime/env.c). The README's table
# holds each row tessera-info --env prints from it, word for word, and no file of runtime/ but
# env.c reads a TSR_ variable itself.
src=${top_srcdir:-.}
build=${top_builddir:-.}
echo "1..2"
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
