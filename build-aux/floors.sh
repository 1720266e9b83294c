#!/bin/sh
# floors.sh PLAN OBJDIR [MAX_CIRCLE MAX_UP [SRCDIR]]: how runtime/'s files call each other,
# against the floor plan PLAN (runtime/FLOORS: one line per file, bottom floor first: "floor file
# concept"). An arrow A -> B when A's object file uses a symbol that only B's object defines (nm);
# with SRCDIR, also when A's source names a tsr_ symbol that only B's source defines
# (build-aux/floors-src.sh), so that the configurations not built here (CUDA, MPI, OpenCL) are
# checked too. Prints every arrow that runs up a floor, the circles (files that reach each other
# through arrows), and the largest; exits 1 when a file has no floor, when a file is listed before
# one it calls (outside a circle: PLAN is a complete bottom-up order), when the largest circle has
# more than MAX_CIRCLE files or more than MAX_UP arrows run up. OBJDIR holds the library's objects
# (libtool's .libs/ or not; an object whose source is not beside PLAN is skipped); "-": none, the
# sources only.
set -eu
plan=$1
objdir=$2
max_circle=${3:-1000}
max_up=${4:-1000}
srcdir=${5:-}

objects=
if [ "$objdir" != - ]; then
	objects=$(ls "$objdir"/.libs/*.o 2>/dev/null || ls "$objdir"/*.o)
fi
# "D file symbol" for each definition, "U file symbol" for each use
{
	for o in $objects; do
		f=$(basename "$o" .o)
		# an object left by a source that was renamed or removed (a build tree older than the
		# sources) is not part of the library any more
		if [ ! -e "$(dirname "$plan")/$f.c" ] && [ ! -e "$(dirname "$plan")/$f.cu" ]; then
			continue
		fi
		nm -P "$o" | awk -v f="$f" '$2 == "U" { print "U", f, $1 } $2 ~ /^[TDBRGSCVW]$/ { print "D", f, $1 }'
	done
	if [ -n "$srcdir" ]; then
		sh "$(dirname "$0")/floors-src.sh" "$srcdir"/*.c $(ls "$srcdir"/*.cu 2>/dev/null)
	fi
} | awk -v plan="$plan" -v max_circle="$max_circle" -v max_up="$max_up" '
BEGIN {
	nfloors = 0
	while ((getline line < plan) > 0) {
		if (line ~ /^#/ || line !~ /[^ \t]/)
			continue
		split(line, w, " ")
		name = w[1]
		f = w[2]
		sub(/\.(c|cu)$/, "", f)
		if (name != floorname[nfloors])
			floorname[++nfloors] = name
		floor[f] = nfloors
		line_of[f] = ++nlines
	}
}
$1 == "D" && ($3, $2) in defined { next } # read from the object and from the source
$1 == "D" { defined[$3, $2] = 1; ndef[$3]++; def[$3] = $2; file[$2] = 1; next }
$1 == "U" { nuse++; use_file[nuse] = $2; use_sym[nuse] = $3; file[$2] = 1 }
END {
	bad = 0
	for (f in file)
		if (!(f in floor)) {
			printf "no floor: %s (add it to %s)\n", f, plan
			bad = 1
		}
	for (i = 1; i <= nuse; i++) {
		a = use_file[i]
		s = use_sym[i]
		if (ndef[s] != 1 || def[s] == a)
			continue
		b = def[s]
		if (!((a, b) in arrow))
			narrows++
		arrow[a, b] = 1
		if (floor[a] < floor[b])
			why[a, b] = why[a, b] " " s
	}
	nodes = 0
	for (f in file)
		node[++nodes] = f
	for (i = 1; i <= nodes; i++)
		for (j = 1; j <= nodes; j++)
			reach[i, j] = ((node[i], node[j]) in arrow)
	for (k = 1; k <= nodes; k++)
		for (i = 1; i <= nodes; i++)
			if (reach[i, k])
				for (j = 1; j <= nodes; j++)
					if (reach[k, j])
						reach[i, j] = 1
	for (i = 1; i <= nodes; i++)
		index_of[node[i]] = i
	# the plan lists a file after those it calls, but for the files of one circle
	nlater = 0
	for (key in arrow) {
		split(key, ab, SUBSEP)
		if (line_of[ab[1]] < line_of[ab[2]] && !reach[index_of[ab[2]], index_of[ab[1]]]) {
			printf "listed before what it calls: %s -> %s (move %s above %s in %s)\n",
				ab[1], ab[2], ab[2], ab[1], plan
			nlater++
		}
	}
	if (nlater)
		bad = 1
	nup = 0
	for (key in why) {
		split(key, ab, SUBSEP)
		printf "up: %s (%s) -> %s (%s):%s\n", ab[1], floorname[floor[ab[1]]], ab[2], floorname[floor[ab[2]]], why[key]
		nup++
	}
	largest = 1
	for (i = 1; i <= nodes; i++) {
		if (done[i])
			continue
		members = node[i]
		size = 1
		for (j = i + 1; j <= nodes; j++)
			if (reach[i, j] && reach[j, i]) {
				done[j] = 1
				members = members " " node[j]
				size++
			}
		if (size > 1)
			printf "circle of %d: %s\n", size, members
		if (size > largest)
			largest = size
	}
	printf "%d files on %d floors, %d arrows, %d up; largest circle: %d files\n", nodes, nfloors, narrows, nup, largest
	if (largest > max_circle) {
		printf "the largest circle has more than %d files\n", max_circle
		bad = 1
	}
	if (nup > max_up) {
		printf "more than %d arrows run up\n", max_up
		bad = 1
	}
	exit bad
}'
