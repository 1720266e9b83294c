/* cublas_stub.c: a stand-in libcublas.so.13 for a GPU machine that lacks the real one.
 * StarPU links cuBLAS but calls it only from starpu_cublas_init() and friends, which Tessera never
 * calls; the real library needs libcublasLt (over 500 MiB), too big to carry. These are the six
 * symbols libstarpu-1.4 imports; each reports "not supported" (CUBLAS_STATUS_NOT_SUPPORTED = 15),
 * so a caller that did use cuBLAS would fail loudly instead of computing nothing. run-gpu.sh puts
 * this library on the path only when no real libcublas.so.13 is found. */
#define NOT_SUPPORTED 15

int cublasInit(void) { return NOT_SUPPORTED; }
int cublasShutdown(void) { return NOT_SUPPORTED; }
int cublasCreate_v2(void **handle) { (void)handle; return NOT_SUPPORTED; }
int cublasDestroy_v2(void *handle) { (void)handle; return NOT_SUPPORTED; }
int cublasSetStream_v2(void *handle, void *stream) { (void)handle; (void)stream; return NOT_SUPPORTED; }
int cublasSetKernelStream(void *stream) { (void)stream; return NOT_SUPPORTED; }
