#!/bin/sh
# tests/oracle/devices.sh: the oracle's random programs with an OpenCL device as a second memory
# node (POCL's device on the CPU here, STARPU_OPENCL_ON_CPUS=1): the task body runs as an OpenCL
# variant over the device's buffers (kernel_opencl.c), so data moves between the host and the
# device and Tessera's syncs, folds and fills run there. Batches under eager, lws and dmda with 0,
# 1 and 2 CPU workers beside the device, classic then coherence-by-pieces programs, then fault
# injection (oracle --nopencl 1, check mode). TSR_ORACLE_DEVICE_COUNT programs per classic batch
# (default 120: 1,512 programs in all), from seed TSR_ORACLE_DEVICE_SEED (default 200001, apart
# from the CPU batches' seeds: the check mode takes its first seed from TSR_ORACLE_SEED). Without
# an OpenCL device the oracle prints "1..0 # SKIP" (exit 77, which TAP does not need: the plan
# says it).
bin=${top_builddir:-.}/tests/oracle/oracle
TSR_ORACLE_SEED=${TSR_ORACLE_DEVICE_SEED:-200001} "$bin" --nopencl 1 --count "${TSR_ORACLE_DEVICE_COUNT:-120}"
rc=$?
[ $rc -eq 77 ] && exit 0
exit $rc
