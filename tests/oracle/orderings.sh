#!/bin/sh
# tests/oracle/orderings.sh: the oracle's random programs under the orderings the default run
# (tests/oracle/oracle: Tessera's own explicit dependences, on this CPU-only machine) does not use.
# - TSR_COHERENCE=tokens: the coherence protocol of machines with several memory nodes (GPUs):
#   void tokens order the views and sync tasks bring a view's home copy up to date before it is
#   used. Here the syncs move nothing, but every ordering they and the tokens must provide is
#   checked bit for bit. StarPU's sequential consistency orders the tasks, as it does on GPUs.
# - TSR_DEPS=implicit: the views shared as on one memory node, ordered by StarPU's sequential
#   consistency instead of Tessera's explicit dependences (the opt-out).
# - TSR_TASKDATA=buffers: Tessera's explicit dependences with every view listed to StarPU as a
#   buffer, as before direct task data (the default run's tasks list none, order.c).
# One TAP line per batch of 1,000 programs.
bin=${top_builddir:-.}/tests/oracle/oracle
echo "1..5"
i=0
for cfg in "TSR_COHERENCE=tokens lws 2 20001" "TSR_COHERENCE=tokens eager 1 30001" \
	"TSR_DEPS=implicit lws 2 40001" "TSR_DEPS=implicit dmdas 2 50001" \
	"TSR_TASKDATA=buffers eager 2 60001"; do
	set -- $cfg
	i=$((i + 1))
	out=$(env "$1" "$bin" --first "$4" --count 1000 --sched "$2" --ncpu "$3" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ]; then
		echo "ok $i - $1 sched=$2 ncpu=$3: seeds $4.. (1000 programs)"
	else
		echo "not ok $i - $1 sched=$2 ncpu=$3: seeds $4.. (1000 programs)"
	fi
done
