#!/bin/sh
# tests/layout/comments.sh: no comment of runtime/, apps/, tests/ or tools/ points to code that
# moved or is gone. Every file a comment names (a .c, .h, .cu, .sh or .py) exists in the tree (or is
# a header the code includes), and every function it names (`name()`) and every tsr_ identifier it
# names is still defined, declared or used by the code of the tree. Each stale name: file:line.
# The few names of other projects' code that comments cite on purpose are listed in `elsewhere`.
src=${top_srcdir:-.}
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not found"
	exit 0
fi
echo "1..1"
if out=$(python3 - "$src" <<'EOF'
import os, re, sys

top = sys.argv[1]
CLIKE = ('.c', '.h', '.cu', '.cc', '.cl', '.gpu', '.ocl')
HASH = ('.sh', '.py', '.inc', '.am', '.ac')
CHECKED = ('runtime', 'apps', 'tests', 'tools')
TREE = CHECKED + ('tasks', 'build-aux', 'doc', 'm4')

def kind(path):
    name = os.path.basename(path)
    if name.endswith(CLIKE):
        return 'c'
    if name.endswith(HASH) or name in ('Makefile.am', 'configure.ac'):
        return 'hash'
    return None

def split_c(text):
    """The text cut in (line, comment) and code: strings and chars stay code, comments go."""
    comments, code, i, n, line = [], [], 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            comments.append((line, text[i:j]))
            line += text.count('\n', i, j)
            code.append('\n' * text.count('\n', i, j))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            comments.append((line, text[i:j]))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            code.append(text[i:j + 1])
            i = j + 1
        else:
            if c == '\n':
                line += 1
            code.append(c)
            i += 1
    return comments, ''.join(code)

def split_hash(text):
    """Whole-line # comments (not the #! line); the rest is code."""
    comments, code = [], []
    for no, l in enumerate(text.split('\n'), 1):
        s = l.lstrip()
        if s.startswith('#') and not s.startswith('#!'):
            comments.append((no, s))
        else:
            code.append(l)
    return comments, '\n'.join(code)

files = []
for d in TREE:
    for root, dirs, names in os.walk(os.path.join(top, d)):
        dirs[:] = [x for x in dirs if not x.startswith('.')]
        for name in names:
            files.append(os.path.relpath(os.path.join(root, name), top))
for extra in ('configure.ac', 'Makefile.am'):
    if os.path.exists(os.path.join(top, extra)):
        files.append(extra)

basenames = set(os.path.basename(f) for f in files)
basenames |= set(b[:-3] for b in basenames if b.endswith('.in'))
paths = set(files)
code_words, called, includes, parts = set(), set(), set(), []
for f in files:
    k = kind(f)
    if not k:
        continue
    try:
        text = open(os.path.join(top, f), encoding='utf-8', errors='replace').read()
    except OSError:
        continue
    comments, code = split_c(text) if k == 'c' else split_hash(text)
    code_words |= set(re.findall(r'[A-Za-z_]\w*', code))
    called |= set(re.findall(r'([A-Za-z_]\w*)\s*\(', code))
    includes |= set(os.path.basename(h) for h in re.findall(r'#\s*include\s*[<"]([^>"]+)[>"]', code))
    if f.split(os.sep)[0] in CHECKED:
        parts.append((f, comments))

# Legion's circuit kernels, StarPU's build script and its cuBLAS entry, which Tessera never calls.
elsewhere = {'circuit_gpu.cu', 'autogen.sh', 'starpu_cublas_init'}
FILE = re.compile(r'(?<![\w./-])((?:[\w-]+/)*[\w-]+\.(?:c|h|cu|sh|py))(?![\w])')
FUNC = re.compile(r'\b([A-Za-z_]\w*)\(\)')
TSR = re.compile(r'\b(tsr__?[a-z0-9]\w*)(?!\w|\.(?:m4|in|c|h|cu|sh|py)\b)')
stale = 0
for f, comments in parts:
    for line, text in comments:
        for off, l in enumerate(text.split('\n')):
            where = '%s:%d' % (f, line + off)
            for name in FILE.findall(l):
                if name in paths or os.path.basename(name) in basenames or name in includes \
                        or name in elsewhere:
                    continue
                print('%s: file %s' % (where, name))
                stale += 1
            funcs = FUNC.findall(l)
            for name in funcs:
                if name in called or name in elsewhere:
                    continue
                print('%s: function %s' % (where, name))
                stale += 1
            for name in TSR.findall(l):
                if name.endswith('_') or name in code_words or name in funcs:
                    continue
                print('%s: name %s' % (where, name))
                stale += 1
print('%d stale references' % stale)
sys.exit(1 if stale else 0)
EOF
); then
	echo "$out" | sed 's/^/# /'
	echo "ok 1 - every file and function a comment names is in the tree"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 1 - comments name files or functions the tree no longer has"
fi
