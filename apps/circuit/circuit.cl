/* circuit.cl: OpenCL C kernels of the circuit simulation's three tasks, the port of circuit_cuda.cu;
 * embedded into the program by build-aux/cl2h.sh and built at run time (circuit_opencl.c, with
 * -cl-fp32-correctly-rounded-divide-sqrt: OpenCL's float division may otherwise be off by 2.5 ulp).
 *
 * Every operation is the IEEE float operation of the CPU kernels (circuit_cpu.c), in the same order:
 * FP_CONTRACT OFF keeps a * b + c from becoming an FMA, and the divisions are correctly rounded. A
 * wire then computes the same bits on either kind of worker. Arrays are a buffer and the byte
 * offset of their first element (of node lo for a node window). */
#pragma OPENCL FP_CONTRACT OFF

#define SEG 10   /* CIRCUIT_SEGMENTS (circuit.h) */

#define AT(T, buf, off) ((global T *)((buf) + (off)))

/* The value of node g in the first of the three windows (private, the piece's shared, ghost) that
 * holds it; NULL when none does (the end reads 0, as on CPUs). */
#define WINDOW_ARGS(Q)                                                                                \
	global Q uchar *w0, ulong o0, long lo0, long hi0, global Q uchar *w1, ulong o1, long lo1, long hi1, \
	global Q uchar *w2, ulong o2, long lo2, long hi2
#define FIND_NODE(g)                                                                                  \
	((g) >= lo0 && (g) <= hi0 ? AT(float, w0, o0) + ((g) - lo0)                                       \
	 : (g) >= lo1 && (g) <= hi1 ? AT(float, w1, o1) + ((g) - lo1)                                    \
	 : (g) >= lo2 && (g) <= hi2 ? AT(float, w2, o2) + ((g) - lo2) : 0)

/* Legion's calc_new_currents, one work-item per wire (n wires; global size n). cur and wv hold the
 * wires' segments with leading dimensions cur_ld and wv_ld (elements). */
kernel void circuit_cnc(long n, global const uchar *inb, ulong in_off, global const uchar *outb, ulong out_off,
                        global const uchar *indb, ulong ind_off, global const uchar *resb, ulong res_off,
                        global const uchar *capb, ulong cap_off, global uchar *curb, ulong cur_off, long cur_ld,
                        global uchar *wvb, ulong wv_off, long wv_ld, WINDOW_ARGS(const), float dt, int steps)
{
	const long w = (long)get_global_id(0);
	if (w >= n)
		return;
	global float *cur = AT(float, curb, cur_off) + w, *wv = AT(float, wvb, wv_off) + w;
	float ti[SEG], oi[SEG], tv[SEG + 1], ov[SEG - 1];
	for (int s = 0; s < SEG; s++)
		ti[s] = oi[s] = cur[s * cur_ld];
	for (int s = 0; s < SEG - 1; s++)
		tv[s + 1] = ov[s] = wv[s * wv_ld];
	const long gin = AT(const int, inb, in_off)[w], gout = AT(const int, outb, out_off)[w];
	global const float *pin = FIND_NODE(gin), *pout = FIND_NODE(gout);
	tv[0] = pin ? *pin : 0.0f;
	tv[SEG] = pout ? *pout : 0.0f;
	const float recip_dt = 1.0f / dt;
	const float inductance = AT(const float, indb, ind_off)[w];
	const float recip_resistance = 1.0f / AT(const float, resb, res_off)[w];
	const float recip_capacitance = 1.0f / AT(const float, capb, cap_off)[w];
	for (int j = 0; j < steps; j++) {
		/* I = (dV - L * I') / R, and the voltages between segments, as circuit_cpu.c's cnc_block */
		for (int s = 0; s < SEG; s++)
			ti[s] = ((tv[s + 1] - tv[s]) - (inductance * (ti[s] - oi[s]) * recip_dt)) * recip_resistance;
		for (int s = 0; s < SEG - 1; s++)
			tv[s + 1] = ov[s] + dt * (ti[s] - ti[s + 1]) * recip_capacitance;
	}
	for (int s = 0; s < SEG; s++)
		cur[s * cur_ld] = ti[s];
	for (int s = 0; s < SEG - 1; s++)
		wv[s * wv_ld] = tv[s + 1];
}

/* Legion's distribute_charge, in parallel and bit for bit the CPU's (circuit_cpu.c adds wire by
 * wire, the in end before the out end). Wires of a piece share nodes and float addition does not
 * associate, so a node's charge is only the CPU's if its contributions are added in the CPU's
 * order, one after the other; atomics (none for floats in OpenCL 1.2 anyway) would fix no order.
 * So the order is made explicit. The wire ends are numbered as the CPU visits them, "events"
 * e = 2 w (wire w's in end) and 2 w + 1 (its out end); a node is a "slot", its index in the three
 * windows laid end to end (private, the piece's shared, ghost: k slots). Then, in four kernels on
 * the worker's queue, over scratch arrays count[k], start[k + 1] and ev[2 n] (circuit_opencl.c):
 *   circuit_dc_count  one item per event: count[slot]++ (integer atomics: the counts are exact);
 *   circuit_dc_scan   one work-group: start[] = exclusive prefix sums of count[];
 *   circuit_dc_place  one item per event: ev[start[slot] + --count[slot]] = e, a bucket per slot
 *                     in no particular order (count[] is back to 0 after);
 *   circuit_dc_fold   one item per slot: sort its bucket by event (a node has few ends), then
 *                     add the contributions to the node's charge in that order.
 * The order of the adds, the only thing that could change a bit, is thus the CPU's; each
 * contribution is the CPU's product (-dt * first, dt * last). circuit_cuda.cu runs the same four
 * steps. first and last are segment 0 and segment SEG-1 of the currents. */

/* The slot of node g, or -1 when no window holds it (the end is skipped, as on CPUs); n0 and n1 are
 * the private and shared windows' lengths. */
#define BOUNDS_ARGS long lo0, long hi0, long lo1, long hi1, long lo2, long hi2
#define SLOT(g)                                                                                 \
	((g) >= lo0 && (g) <= hi0 ? (int)((g) - lo0)                                                \
	 : (g) >= lo1 && (g) <= hi1 ? (int)((hi0 - lo0 + 1) + (g) - lo1)                            \
	 : (g) >= lo2 && (g) <= hi2 ? (int)((hi0 - lo0 + 1) + (hi1 - lo1 + 1) + (g) - lo2) : -1)

/* The node of event e's end: in[w] or out[w]. */
#define EVENT_NODE(e) ((e) & 1 ? (long)out[(e) >> 1] : (long)in[(e) >> 1])

kernel void circuit_dc_count(int nev, global const uchar *inb, ulong in_off, global const uchar *outb,
                             ulong out_off, BOUNDS_ARGS, global uchar *scratch, ulong count_off)
{
	const int e = (int)get_global_id(0);
	if (e >= nev)
		return;
	global const int *in = AT(const int, inb, in_off), *out = AT(const int, outb, out_off);
	const long g = EVENT_NODE(e);
	const int slot = SLOT(g);
	if (slot >= 0)
		atomic_inc(AT(int, scratch, count_off) + slot);
}

/* One work-group of SCAN_WG items (CIRCUIT_DC_SCAN_GROUP of circuit.h, given at build time): each
 * sums a chunk of count[], item 0 scans the chunk sums, each writes its chunk's prefix sums.
 * start[k] is the number of events that land in a slot. */
#define SCAN_WG CIRCUIT_DC_SCAN_GROUP
kernel void circuit_dc_scan(int k, global uchar *scratch, ulong count_off, ulong start_off)
{
	local int part[SCAN_WG];
	global const int *count = AT(const int, scratch, count_off);
	global int *start = AT(int, scratch, start_off);
	const int t = (int)get_local_id(0);
	const int chunk = (k + SCAN_WG - 1) / SCAN_WG;
	const int b = min(t * chunk, k), e = min(b + chunk, k);
	int sum = 0;
	for (int i = b; i < e; i++)
		sum += count[i];
	part[t] = sum;
	barrier(CLK_LOCAL_MEM_FENCE);
	if (t == 0) {
		int acc = 0;
		for (int i = 0; i < SCAN_WG; i++) {
			const int c = part[i];
			part[i] = acc;
			acc += c;
		}
		start[k] = acc;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	int acc = part[t];
	for (int i = b; i < e; i++) {
		start[i] = acc;
		acc += count[i];
	}
}

kernel void circuit_dc_place(int nev, global const uchar *inb, ulong in_off, global const uchar *outb,
                             ulong out_off, BOUNDS_ARGS, global uchar *scratch, ulong count_off, ulong start_off,
                             ulong ev_off)
{
	const int e = (int)get_global_id(0);
	if (e >= nev)
		return;
	global const int *in = AT(const int, inb, in_off), *out = AT(const int, outb, out_off);
	const long g = EVENT_NODE(e);
	const int slot = SLOT(g);
	if (slot < 0)
		return;
	const int pos = atomic_dec(AT(int, scratch, count_off) + slot) - 1;
	AT(int, scratch, ev_off)[AT(const int, scratch, start_off)[slot] + pos] = e;
}

kernel void circuit_dc_fold(int k, global const uchar *curb, ulong first_off, ulong last_off, WINDOW_ARGS(),
                            global uchar *scratch, ulong start_off, ulong ev_off, float dt)
{
	const int slot = (int)get_global_id(0);
	if (slot >= k)
		return;
	global const int *start = AT(const int, scratch, start_off);
	global int *ev = AT(int, scratch, ev_off);
	const int b = start[slot], end = start[slot + 1];
	if (b == end)
		return;
	/* the bucket in event order: insertion sort (buckets hold a node's few ends) */
	for (int i = b + 1; i < end; i++) {
		const int e = ev[i];
		int j = i - 1;
		while (j >= b && ev[j] > e) {
			ev[j + 1] = ev[j];
			j--;
		}
		ev[j + 1] = e;
	}
	const int n0 = (int)(hi0 - lo0 + 1), n1 = (int)(hi1 - lo1 + 1);
	global float *q = slot < n0        ? AT(float, w0, o0) + slot
	                  : slot < n0 + n1 ? AT(float, w1, o1) + (slot - n0)
	                                   : AT(float, w2, o2) + (slot - n0 - n1);
	global const float *first = AT(const float, curb, first_off), *last = AT(const float, curb, last_off);
	float v = *q;
	for (int i = b; i < end; i++) {
		const int e = ev[i];
		const float dq = e & 1 ? dt * last[e >> 1] : -dt * first[e >> 1];
		v += dq;
	}
	*q = v;
}

/* Legion's update_voltages, one work-item per node (n nodes; global size n). */
kernel void circuit_uv(long n, global uchar *vb, ulong v_off, global uchar *qb, ulong q_off, global const uchar *capb,
                       ulong cap_off, global const uchar *leakb, ulong leak_off)
{
	const long i = (long)get_global_id(0);
	if (i >= n)
		return;
	global float *voltage = AT(float, vb, v_off), *charge = AT(float, qb, q_off);
	float v = voltage[i] + charge[i] / AT(const float, capb, cap_off)[i];
	voltage[i] = v * (1.0f - AT(const float, leakb, leak_off)[i]);
	charge[i] = 0.0f;
}
