#!/bin/sh
# tests/layout/splitlines.sh: a printed line reads as one line in the source. Counted in the C of
# runtime/, apps/ and tests/, as the formatter leaves them: a line of a multi-line text (adjacent
# string literals, some ending in \n) cut before its \n; and a message cut where its next piece
# would still fit on the line of the first (100 columns). Each cut: file:line; any fails the test.
src=${top_srcdir:-.}
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not found"
	exit 0
fi
echo "1..1"
out=$(python3 - "$src" <<'EOF'
import os, re, sys

top = sys.argv[1]
LIT = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
RUN = re.compile(r'(?:"(?:[^"\\\n]|\\.)*"\s*)+')

def blank_comments(s):
    """Comments and char literals become spaces (newlines kept), so no quote in them counts."""
    def blank(m):
        return re.sub(r'[^\n]', ' ', m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|\'(?:[^\'\\\n]|\\.)*\'', blank, s, flags=re.S)

def tail(line, lit):
    """What stays glued to a literal that ends its line's text: a comma, or the call's end."""
    rest = line[line.rfind('"' + lit + '"') + len(lit) + 2:].strip()
    return rest[:rest.find(',') + 1] if ',' in rest else rest

def cuts(path):
    raw = open(path, encoding='utf-8', errors='replace').read()
    s, lines = blank_comments(raw), raw.split('\n')
    for m in RUN.finditer(s):
        lits = [(x.group(1), s.count('\n', 0, m.start() + x.start()) + 1)
                for x in LIT.finditer(m.group(0))]
        multi = any(l.endswith('\\n') for l, _ in lits[:-1])
        for (a, la), (b, lb) in zip(lits, lits[1:]):
            if a.endswith('\\n') or la == lb:
                continue
            if multi:
                yield la, 'a line of a multi-line text cut before its end'
            elif len(lines[la - 1].expandtabs(8)) + len(b) + len(tail(lines[lb - 1], b)) <= 100:
                yield la, 'a message cut where its next piece fits'

for d in ('runtime', 'tests', 'apps'):
    for root, dirs, names in sorted(os.walk(os.path.join(top, d))):
        for name in sorted(names):
            if not re.search(r'\.(c|h|cu|cc)$', name) or name.endswith('.cl.h'):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, top)
            for line, why in cuts(path):
                print('cut %s:%d: %s' % (rel, line, why))
EOF
)
cut=$(echo "$out" | grep -c '^cut ')
echo "$out" | grep '^cut ' | sed 's/^cut /# /'
if [ "$cut" -eq 0 ]; then
	echo "ok 1 - no printed line of runtime/, apps/ or tests/ is cut mid-line in the source"
else
	echo "not ok 1 - $cut printed lines of runtime/, apps/ and tests/ are cut mid-line (join them)"
fi
