/*
 * halo.cu - a decomposed run's halo exchange between GPUs (solver/part.h) through NCCL, which
 * is loaded at run time (libnccl.so.2), so that the binary needs it only on machines that
 * run several GPUs. The sends and receives go on the per-thread default stream, after the
 * step's kernels and before its receivers are read, or on the engine's exchange stream while
 * it updates the slab's interior (engine.cu, overlap_step).
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "fdtd_cuda.h"

/* The NCCL calls used here, resolved from the library. */
struct nccl_api {
	ncclResult_t (*get_unique_id)(ncclUniqueId *);
	ncclResult_t (*comm_init_rank)(ncclComm_t *, int, ncclUniqueId, int);
	ncclResult_t (*comm_destroy)(ncclComm_t);
	ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
	ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
	ncclResult_t (*group_start)(void);
	ncclResult_t (*group_end)(void);
	const char *(*error_string)(ncclResult_t);
};

struct cuda_nccl {
	ncclComm_t comm;
};

static struct nccl_api api;

static int nccl_load(struct rs_error *err)
{
	static const char *const names[] = { "libnccl.so.2", "libnccl.so" };
	void *lib = NULL;

	if (api.send)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !lib; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
	if (!lib)
		return rs_fail(err, RS_ENODEV, "several GPUs need NCCL, and libnccl.so.2 cannot be "
			       "loaded: %s (install libnccl2, or set LD_LIBRARY_PATH)", dlerror());
	*(void **)&api.get_unique_id = dlsym(lib, "ncclGetUniqueId");
	*(void **)&api.comm_init_rank = dlsym(lib, "ncclCommInitRank");
	*(void **)&api.comm_destroy = dlsym(lib, "ncclCommDestroy");
	*(void **)&api.recv = dlsym(lib, "ncclRecv");
	*(void **)&api.group_start = dlsym(lib, "ncclGroupStart");
	*(void **)&api.group_end = dlsym(lib, "ncclGroupEnd");
	*(void **)&api.error_string = dlsym(lib, "ncclGetErrorString");
	*(void **)&api.send = dlsym(lib, "ncclSend");
	if (!api.get_unique_id || !api.comm_init_rank || !api.comm_destroy || !api.recv ||
	    !api.group_start || !api.group_end || !api.error_string || !api.send) {
		api.send = NULL;
		return rs_fail(err, RS_ENODEV, "libnccl.so.2 lacks point-to-point calls (NCCL 2.7 "
			       "or later is needed)");
	}
	return 0;
}

static int nccl_check(ncclResult_t r, const char *what, struct rs_error *err)
{
	return r == ncclSuccess ? 0 : rs_fail(err, RS_EDEVICE, "NCCL %s: %s", what,
					       api.error_string(r));
}

int cuda_select(int device, char *bus, size_t len, struct rs_error *err)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		cudaGetLastError();
		return rs_fail(err, RS_ENODEV, "no GPU for this rank");
	}
	if (cudaSetDevice(device % n) != cudaSuccess ||
	    cudaDeviceGetPCIBusId(bus, (int)len, device % n) != cudaSuccess)
		return rs_fail(err, RS_EDEVICE, "cannot use GPU %d", device % n);
	return 0;
}

int cuda_bus(int device, char *bus, size_t len, struct rs_error *err)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		cudaGetLastError();
		return rs_fail(err, RS_ENODEV, "no GPU for this rank");
	}
	if (cudaDeviceGetPCIBusId(bus, (int)len, device % n) != cudaSuccess)
		return rs_fail(err, RS_EDEVICE, "cannot use GPU %d", device % n);
	return 0;
}

int cuda_copy(void *to, const void *from, size_t bytes, int to_device, struct rs_error *err)
{
	const cudaError_t e = cudaMemcpyAsync(to, from, bytes, to_device ? cudaMemcpyHostToDevice
								       : cudaMemcpyDeviceToHost,
					      cudaStreamPerThread);

	if (e == cudaSuccess && cudaStreamSynchronize(cudaStreamPerThread) == cudaSuccess)
		return 0;
	return rs_fail(err, RS_EDEVICE, "halo copy: %s", cudaGetErrorString(cudaGetLastError()));
}

void *cuda_pinned(size_t bytes)
{
	void *p = NULL;

	return cudaMallocHost(&p, bytes) == cudaSuccess ? p : NULL;
}

void cuda_pinned_free(void *p)
{
	if (p)
		cudaFreeHost(p);
}

int cuda_nccl_id(void *id, size_t len, struct rs_error *err)
{
	ncclUniqueId u;

	if (len < sizeof(u))
		return rs_fail(err, RS_EINTERNAL, "an NCCL id needs %zu bytes", sizeof(u));
	if (nccl_load(err) || nccl_check(api.get_unique_id(&u), "id", err))
		return err->code;
	memcpy(id, &u, sizeof(u));
	return 0;
}

/* NCCL connects two ranks at their first transfer (about 0.2 s on two H100s): a byte
 * swapped with each neighbour in z (rank - 1, rank + 1) makes that part of the setup rather
 * than of the first step. */
static int nccl_connect(struct cuda_nccl *c, int rank, int size, struct rs_error *err)
{
	struct cuda_swap s[2];
	char *buf = NULL;
	int n = 0, rc;

	if (cudaMalloc(&buf, 4) != cudaSuccess)
		return rs_fail(err, RS_EDEVICE, "no device memory for the halo exchange");
	for (int q = -1; q <= 1; q += 2)
		if (rank + q >= 0 && rank + q < size) {
			s[n] = (struct cuda_swap){ buf + 2 * n, buf + 2 * n + 1, 1, rank + q };
			n++;
		}
	rc = cuda_nccl_swap(c, s, n, NULL, err);
	if (!rc && cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess)
		rc = rs_fail(err, RS_EDEVICE, "the first halo exchange: %s",
			     cudaGetErrorString(cudaGetLastError()));
	cudaFree(buf);
	return rc;
}

struct cuda_nccl *cuda_nccl_open(const void *id, int rank, int size, struct rs_error *err)
{
	struct cuda_nccl *c;
	ncclUniqueId u;

	if (nccl_load(err))
		return NULL;
	if (!(c = (struct cuda_nccl *)calloc(1, sizeof(*c)))) {
		rs_fail(err, RS_ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(&u, id, sizeof(u));
	if (nccl_check(api.comm_init_rank(&c->comm, size, u, rank), "communicator", err)) {
		free(c);
		return NULL;
	}
	if (nccl_connect(c, rank, size, err)) {
		cuda_nccl_close(c);
		return NULL;
	}
	return c;
}

int cuda_nccl_swap(struct cuda_nccl *c, const struct cuda_swap *s, int n, void *stream,
		   struct rs_error *err)
{
	cudaStream_t st = stream ? (cudaStream_t)stream : cudaStreamPerThread;
	ncclResult_t r = api.group_start();

	for (int q = 0; q < n && r == ncclSuccess; q++) {
		r = api.send(s[q].send, s[q].bytes, ncclChar, s[q].peer, c->comm, st);
		if (r == ncclSuccess)
			r = api.recv(s[q].recv, s[q].bytes, ncclChar, s[q].peer, c->comm, st);
	}
	if (r == ncclSuccess)
		r = api.group_end();
	else
		api.group_end();
	return nccl_check(r, "halo exchange", err);
}

void cuda_nccl_close(struct cuda_nccl *c)
{
	if (!c)
		return;
	api.comm_destroy(c->comm);
	free(c);
}
