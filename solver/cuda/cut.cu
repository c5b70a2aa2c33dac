/*
 * cut.cu - grid.walls: fitted on the device (geometry/voxel.h, struct vox_cut): each group's
 * u^(n-1) saved before the step's kernel, its finite-volume update after it, and its value
 * spread to its members after the branch walls; the CPU engine's expressions (solver/cpu.c)
 * in its order, so that both round alike. A member's value is at cell >> sh (sh = 1 on the
 * fcc lattice's folded fields).
 */
#include "engine.h"

#define CUT_THREADS 256

/* The faces' steps in cells (vox_cut_offset), their count and the shift to a field index. */
struct cut_faces {
	long long st[12];
	int nf, sh;
};

struct cuda_cut {
	long long ngroups;
	long long *cell, *gstart;	/* as struct vox_cut's */
	float *open;			/* faces.nf per member */
	double *l2v, *sc, *cb;		/* per group, as the CPU engine's (fdtd.c) */
	void *old;			/* per group: u^(n-1), R */
	struct cut_faces faces;
};

template <typename R>
__global__ void k_cut_save(const R *__restrict__ b, const long long *__restrict__ cell,
			   const long long *__restrict__ gstart, long long ng, int sh,
			   R *__restrict__ old)
{
	const long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x;

	if (q < ng)
		old[q] = b[cell[gstart[q]] >> sh];
}

template <typename R>
__global__ void k_cut_step(const R *__restrict__ a, R *__restrict__ b,
			   const long long *__restrict__ cell, const long long *__restrict__ gstart,
			   const float *__restrict__ open, const double *__restrict__ l2v,
			   const double *__restrict__ sc, const double *__restrict__ cb,
			   const R *__restrict__ old, long long ng, const struct cut_faces fc)
{
	const long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x;

	if (q >= ng)
		return;
	const long long m0 = gstart[q], m1 = gstart[q + 1];
	const R u = a[cell[m0] >> fc.sh];
	R t = 0, v;

	for (long long m = m0; m < m1; m++)
		for (int e = 0; e < fc.nf; e++)
			t += (R)open[fc.nf * m + e] * (a[(cell[m] + fc.st[e]) >> fc.sh] - u);
	v = u + (R)sc[q] * ((R)cb[q] * (u - old[q]) + (R)l2v[q] * t);
	for (long long m = m0; m < m1; m++)
		b[cell[m] >> fc.sh] = v;
}

template <typename R>
__global__ void k_cut_spread(R *__restrict__ b, const long long *__restrict__ cell,
			     const long long *__restrict__ gstart, long long ng, int sh)
{
	const long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x;

	if (q >= ng)
		return;
	for (long long m = gstart[q] + 1; m < gstart[q + 1]; m++)
		b[cell[m] >> sh] = b[cell[gstart[q]] >> sh];
}

int cuda_cut_upload(struct cuda_engine *e, const struct vox_cut *c, const double *l2v,
		    const double *sc, const double *cb, struct rs_error *err)
{
	struct cuda_cut *d;
	long long *h = NULL;
	const size_t n = c ? c->n : 0, ng = c ? c->ngroups : 0;
	int rc = 0;

	if (!c)
		return 0;
	if (!l2v || !sc || !cb)	/* roomsim bench's engine, which has no fdtd */
		return rs_fail(err, RS_EINPUT, "fitted walls (grid.walls) are not timed by roomsim "
			       "bench: time roomsim run instead");
	if (!(d = (struct cuda_cut *)calloc(1, sizeof(*d))) ||
	    !(h = (long long *)malloc(((n > ng ? n : ng) + 1) * sizeof(*h)))) {
		free(d);
		return rs_fail(err, RS_ENOMEM, "out of memory for the cut cells' upload");
	}
	e->cut = d;
	d->ngroups = (long long)ng;
	d->faces.nf = c->faces;
	d->faces.sh = e->plan.fcc;
	for (int f = 0; f < c->faces; f++)
		d->faces.st[f] = (long long)vox_cut_offset(&e->plan, c->faces, f);
	if (CK(cudaMalloc(&d->cell, (n + 1) * sizeof(long long))) ||
	    CK(cudaMalloc(&d->gstart, (ng + 1) * sizeof(long long))) ||
	    CK(cudaMalloc(&d->open, ((size_t)c->faces * n + 1) * sizeof(float))) ||
	    CK(cudaMalloc(&d->l2v, (ng + 1) * sizeof(double))) ||
	    CK(cudaMalloc(&d->sc, (ng + 1) * sizeof(double))) ||
	    CK(cudaMalloc(&d->cb, (ng + 1) * sizeof(double))) ||
	    CK(cudaMalloc(&d->old, (ng + 1) * (size_t)e->precision)))
		rc = RS_EDEVICE;
	for (size_t i = 0; !rc && i < n; i++)
		h[i] = (long long)c->cell[i];
	if (!rc && (CK(cudaMemcpy(d->cell, h, n * sizeof(long long), cudaMemcpyHostToDevice))))
		rc = RS_EDEVICE;
	for (size_t i = 0; !rc && i <= ng; i++)
		h[i] = (long long)c->gstart[i];
	if (!rc && (CK(cudaMemcpy(d->gstart, h, (ng + 1) * sizeof(long long),
				  cudaMemcpyHostToDevice)) ||
		    CK(cudaMemcpy(d->open, c->open, (size_t)c->faces * n * sizeof(float),
				   cudaMemcpyHostToDevice)) ||
		    CK(cudaMemcpy(d->l2v, l2v, ng * sizeof(double), cudaMemcpyHostToDevice)) ||
		    CK(cudaMemcpy(d->sc, sc, ng * sizeof(double), cudaMemcpyHostToDevice)) ||
		    CK(cudaMemcpy(d->cb, cb, ng * sizeof(double), cudaMemcpyHostToDevice))))
		rc = RS_EDEVICE;
	free(h);
	return rc;
}

static unsigned cut_blocks(const struct cuda_cut *d)
{
	return (unsigned)((d->ngroups + CUT_THREADS - 1) / CUT_THREADS);
}

/* Before the step's kernel: u^(n-1), in the level the kernel writes. */
int cuda_cut_save(struct cuda_engine *e, struct rs_error *err)
{
	const struct cuda_cut *d = e->cut;

	if (!d || !d->ngroups)
		return 0;
	if (e->precision == 4)
		k_cut_save<float><<<cut_blocks(d), CUT_THREADS>>>(
			(const float *)e->u[e->cur ^ 1], d->cell, d->gstart, d->ngroups,
			d->faces.sh, (float *)d->old);
	else
		k_cut_save<double><<<cut_blocks(d), CUT_THREADS>>>(
			(const double *)e->u[e->cur ^ 1], d->cell, d->gstart, d->ngroups,
			d->faces.sh, (double *)d->old);
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

/* After the step's kernel (u[cur] the new level): the groups' update. */
int cuda_cut_step(struct cuda_engine *e, struct rs_error *err)
{
	const struct cuda_cut *d = e->cut;

	if (!d || !d->ngroups)
		return 0;
	if (e->precision == 4)
		k_cut_step<float><<<cut_blocks(d), CUT_THREADS>>>(
			(const float *)e->u[e->cur ^ 1], (float *)e->u[e->cur], d->cell, d->gstart,
			d->open, d->l2v, d->sc, d->cb, (const float *)d->old, d->ngroups, d->faces);
	else
		k_cut_step<double><<<cut_blocks(d), CUT_THREADS>>>(
			(const double *)e->u[e->cur ^ 1], (double *)e->u[e->cur], d->cell,
			d->gstart, d->open, d->l2v, d->sc, d->cb, (const double *)d->old,
			d->ngroups, d->faces);
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

/* After the branch walls, which update each group's first member: its value to the rest. */
int cuda_cut_spread(struct cuda_engine *e, struct rs_error *err)
{
	const struct cuda_cut *d = e->cut;

	if (!d || !d->ngroups || !e->branch)
		return 0;
	if (e->precision == 4)
		k_cut_spread<float><<<cut_blocks(d), CUT_THREADS>>>(
			(float *)e->u[e->cur], d->cell, d->gstart, d->ngroups, d->faces.sh);
	else
		k_cut_spread<double><<<cut_blocks(d), CUT_THREADS>>>(
			(double *)e->u[e->cur], d->cell, d->gstart, d->ngroups, d->faces.sh);
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

void cuda_cut_free(struct cuda_engine *e)
{
	struct cuda_cut *d = e->cut;

	if (!d)
		return;
	cudaFree(d->cell);
	cudaFree(d->gstart);
	cudaFree(d->open);
	cudaFree(d->l2v);
	cudaFree(d->sc);
	cudaFree(d->cb);
	cudaFree(d->old);
	free(d);
	e->cut = NULL;
}
