/* d2d_bw.cu: the device's copy bandwidth, the anchor of the GPU stencil benchmark. Copies a
 * buffer of -mb MiB device to device -reps times (after a warm-up) and prints the bandwidth
 * counted as the stencil counts its own: bytes read plus bytes written, per second. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	fprintf(stderr, "d2d_bw: %s: %s\n", what, cudaGetErrorString(e));
	return 1;
}

int main(int argc, char **argv)
{
	size_t mb = 1024;
	int reps = 20;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-mb"))
			mb = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "-reps"))
			reps = atoi(argv[i + 1]);
	}
	if (mb == 0 || reps < 1) {
		fprintf(stderr, "usage: d2d_bw [-mb MiB] [-reps N]\n");
		return 2;
	}
	size_t bytes = mb << 20;
	void *a, *b;
	if (check(cudaMalloc(&a, bytes), "cudaMalloc") || check(cudaMalloc(&b, bytes), "cudaMalloc"))
		return 1;
	cudaMemset(a, 1, bytes);
	cudaEvent_t t0, t1;
	cudaEventCreate(&t0);
	cudaEventCreate(&t1);
	if (check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "warm-up copy"))
		return 1;
	cudaEventRecord(t0);
	for (int r = 0; r < reps; r++)
		cudaMemcpyAsync(r % 2 ? a : b, r % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice);
	cudaEventRecord(t1);
	if (check(cudaEventSynchronize(t1), "copies"))
		return 1;
	float ms;
	cudaEventElapsedTime(&ms, t0, t1);
	double gbs = 2.0 * bytes * reps / (ms * 1e-3) * 1e-9;
	struct cudaDeviceProp prop;
	cudaGetDeviceProperties(&prop, 0);
	printf("d2d_bw: %s, %zu MiB x %d copies: %.3f ms per copy, %.1f GB/s (read + write)\n", prop.name, mb, reps,
	       ms / reps, gbs);
	cudaFree(a);
	cudaFree(b);
	return 0;
}
