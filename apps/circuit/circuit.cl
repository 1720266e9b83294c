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

/* Legion's distribute_charge over the n wires of a piece, in wire order, in ONE work-item (global
 * size 1): wires of a piece share nodes, and adding their charges in wire order, as the CPU kernel
 * does, is what keeps private charges bit-identical to the sequential reference (--verify demands
 * it). OpenCL 1.2 has no float atomics, and atomics would fix no order anyway. first and last are
 * segment 0 and segment SEG-1 of the currents. */
kernel void circuit_dc(long n, global const uchar *inb, ulong in_off, global const uchar *outb, ulong out_off,
                       global const uchar *curb, ulong first_off, ulong last_off, WINDOW_ARGS(), float dt)
{
	if (get_global_id(0) != 0)
		return;
	global const int *in = AT(const int, inb, in_off), *out = AT(const int, outb, out_off);
	global const float *first = AT(const float, curb, first_off), *last = AT(const float, curb, last_off);
	for (long w = 0; w < n; w++) {
		float in_dq = -dt * first[w];
		float out_dq = dt * last[w];
		const long gin = in[w], gout = out[w];
		global float *pin = FIND_NODE(gin);
		if (pin)
			*pin += in_dq;
		global float *pout = FIND_NODE(gout);
		if (pout)
			*pout += out_dq;
	}
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
