#!/bin/sh
# tests/oracle/tokens.sh: the oracle's random programs under TSR_COHERENCE=tokens, the coherence
# protocol of machines with several memory nodes (GPUs): void tokens order the views and sync
# tasks bring a view's home copy up to date before it is used. On this CPU-only machine the
# syncs move nothing, but every ordering they and the tokens must provide is checked bit for bit.
# One TAP line per batch of 1,000 programs.
bin=${top_builddir:-.}/tests/oracle/oracle
echo "1..2"
i=0
for cfg in "lws 2 20001" "eager 1 30001"; do
	set -- $cfg
	i=$((i + 1))
	out=$(TSR_COHERENCE=tokens "$bin" --first "$3" --count 1000 --sched "$1" --ncpu "$2" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ]; then
		echo "ok $i - TSR_COHERENCE=tokens sched=$1 ncpu=$2: seeds $3.. (1000 programs)"
	else
		echo "not ok $i - TSR_COHERENCE=tokens sched=$1 ncpu=$2: seeds $3.. (1000 programs)"
	fi
done
