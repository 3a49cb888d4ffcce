/* GPU metrics of a trace: metric descriptions per GPU, learnt from GPU_METRIC records, and
 * the values of GPU_SAMPLE records in their units (gpumetrics.h). Runs in the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpumetrics.h"

void gt_gm_init(struct gt_gm *gm)
{
	memset(gm, 0, sizeof(*gm));
}

void gt_gm_fini(struct gt_gm *gm)
{
	if (!gm)
		return;
	for (uint32_t i = 0; i < gm->cap; i++)
		free(gm->gpus[i]);
	free(gm->gpus);
	memset(gm, 0, sizeof(*gm));
}

static struct gt_gm_gpu *slot(struct gt_gm *gm, uint32_t index, bool create)
{
	if (index >= gm->cap) {
		uint32_t cap = gm->cap ? gm->cap : 8;
		struct gt_gm_gpu **n;

		if (!create)
			return NULL;
		while (cap <= index)
			cap *= 2;
		n = realloc(gm->gpus, cap * sizeof(*n));
		if (!n)
			return NULL;
		memset(n + gm->cap, 0, (cap - gm->cap) * sizeof(*n));
		gm->gpus = n;
		gm->cap = cap;
	}
	if (!gm->gpus[index] && create)
		gm->gpus[index] = calloc(1, sizeof(struct gt_gm_gpu));
	return gm->gpus[index];
}

struct gt_gm_gpu *gt_gm_gpu(struct gt_gm *gm, struct gt_catalog *cat, uint32_t pid,
                            uint32_t device_id, const struct gt_catalog_gpu **gpu_out)
{
	const struct gt_catalog_gpu *g = gt_catalog_gpu(cat, pid, device_id);

	if (!g)
		return NULL;
	if (gpu_out)
		*gpu_out = g;
	return slot(gm, g->index, false);
}

int gt_gm_observe(struct gt_gm *gm, struct gt_catalog *cat, const union gt_record *rec)
{
	const struct gt_catalog_gpu *g;
	struct gt_gm_gpu *s;

	switch (rec->hdr.type) {
	case GT_REC_GPU_METRIC: {
		const struct gt_rec_gpu_metric *r = &rec->gpu_metric;
		struct gt_gm_metric *m;

		if (r->index >= GT_GPU_METRICS_MAX)
			return 0; /* the reader trusts nothing: such a metric is not drawn */
		g = gt_catalog_gpu(cat, r->hdr.pid, r->device_id);
		if (!g)
			return -ENOMEM;
		s = slot(gm, g->index, true);
		if (!s)
			return -ENOMEM;
		m = &s->m[r->index];
		m->name_id = r->name_id;
		m->metric_id = r->metric_id;
		m->unit_id = r->unit_id;
		m->scale = r->scale ? r->scale : 1;
		m->sampler_pid = r->hdr.pid;
		m->interval_ns = r->interval_ns;
		if (r->index + 1 > s->nmetrics)
			s->nmetrics = r->index + 1;
		return 0;
	}
	case GT_REC_GPU_SAMPLE:
		s = gt_gm_gpu(gm, cat, rec->hdr.pid, rec->gpu_sample.device_id, NULL);
		if (s)
			s->samples++;
		return 0;
	default:
		return 0;
	}
}

bool gt_gm_value(const struct gt_gm_gpu *g, const struct gt_rec_gpu_sample *s, unsigned i,
                 double *value)
{
	if (!g || i >= g->nmetrics || i >= s->count || i >= GT_GPU_METRICS_MAX || !g->m[i].name_id)
		return false;
	*value = (double)s->values[i] / (double)g->m[i].scale;
	return true;
}

char *gt_gm_fmt(char *p, const struct gt_gm_gpu *g, const struct gt_rec_gpu_sample *s, unsigned i)
{
	uint64_t raw, scale, pow = 1;
	unsigned digits = 0;
	double v;
	int n;

	if (!gt_gm_value(g, s, i, &v))
		return p;
	raw = s->values[i];
	scale = g->m[i].scale;
	while (pow < scale && digits < 18) {
		pow *= 10;
		digits++;
	}
	if (pow != scale) {
		n = snprintf(p, 32, "%.6g", v);
		return p + (n > 0 && n < 32 ? n : 0);
	}
	n = snprintf(p, 32, "%" PRIu64, raw / scale);
	p += n > 0 && n < 32 ? n : 0;
	if (digits && raw % scale) {
		uint64_t frac = raw % scale;

		*p++ = '.';
		for (unsigned d = digits; d-- > 0;) {
			uint64_t div = 1;

			for (unsigned k = 0; k < d; k++)
				div *= 10;
			*p++ = (char)('0' + (frac / div) % 10);
			frac %= div;
			if (!frac)
				break;
		}
	}
	*p = 0;
	return p;
}
