/* Ranks, local ranks, world sizes and backends of a trace's processes, from their PROCESS
 * records and NCCL's kernels. Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "ranks.h"

/* The table is by pid, not the catalog's processes by (host, pid): the split by rank sends
 * each record to a file by its pid alone, so it sees every record of a pid as one process's,
 * refuses a pid whose PROCESS records name two hosts or ranks (gt_rank_proc.clash), and counts
 * as left out whatever pid records carry (a merged trace's INPUT records, pid 0, too), where
 * the catalog tells processes apart by host and by time. */
struct gt_ranks {
	struct gt_rank_proc *procs; /* order of first appearance */
	size_t nprocs, cap;
	struct gt_idmap by_pid; /* (pid, 0) -> index + 1 */
	struct gt_idmap names;  /* (kernel name id, 0) -> 1 NCCL's, 2 not */
};

int gt_ranks_new(struct gt_ranks **ret)
{
	struct gt_ranks *rk = calloc(1, sizeof(*rk));

	if (!rk || gt_idmap_init(&rk->by_pid, 64) < 0 || gt_idmap_init(&rk->names, 64) < 0) {
		gt_ranks_free(rk);
		return -ENOMEM;
	}
	*ret = rk;
	return 0;
}

void gt_ranks_free(struct gt_ranks *rk)
{
	if (!rk)
		return;
	free(rk->procs);
	gt_idmap_fini(&rk->by_pid);
	gt_idmap_fini(&rk->names);
	free(rk);
}

bool gt_ranks_nccl_kernel(const char *name, size_t len)
{
	static const char *const inner[] = {"ncclKernel", "ncclDevKernel"};
	size_t i = 0;

	if (!name)
		return false;
	/* "_Z<length><name>...": a mangled function at global scope */
	if (len > 2 && name[0] == '_' && name[1] == 'Z') {
		for (i = 2; i < len && name[i] >= '0' && name[i] <= '9'; i++)
			;
		if (i == 2)
			i = 0;
	}
	if (len - i >= 4 && memcmp(name + i, "nccl", 4) == 0)
		return true;
	for (size_t k = 0; k < sizeof(inner) / sizeof(inner[0]); k++) {
		size_t il = strlen(inner[k]);

		for (size_t j = 0; j + il <= len; j++)
			if (memcmp(name + j, inner[k], il) == 0)
				return true;
	}
	return false;
}

/* The process pid, created on first sight. NULL only on -ENOMEM. */
static struct gt_rank_proc *proc_get(struct gt_ranks *rk, uint32_t pid)
{
	uint32_t v = gt_idmap_get(&rk->by_pid, pid, 0);
	struct gt_rank_proc *p;

	if (v)
		return &rk->procs[v - 1];
	if (rk->nprocs == rk->cap) {
		size_t cap = rk->cap ? rk->cap * 2 : 16;
		struct gt_rank_proc *a = realloc(rk->procs, cap * sizeof(*a));

		if (!a)
			return NULL;
		rk->procs = a;
		rk->cap = cap;
	}
	if (gt_idmap_put(&rk->by_pid, pid, 0, (uint32_t)rk->nprocs + 1) < 0)
		return NULL;
	p = &rk->procs[rk->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->rank = p->local_rank = p->world_size = -1;
	return p;
}

int gt_ranks_feed(struct gt_ranks *rk, const struct gt_reader *r, const union gt_record *rec)
{
	struct gt_rank_proc *p;

	if (rec->hdr.type == GT_REC_STRING)
		return 0;
	p = proc_get(rk, rec->hdr.pid);
	if (!p)
		return -ENOMEM;
	p->records++;
	if (rec->hdr.type == GT_REC_PROCESS) {
		const struct gt_rec_process *pr = &rec->process;

		if (p->have_info && (p->host_id != pr->host_id || p->rank != pr->rank))
			p->clash = true;
		p->ppid = pr->ppid;
		p->host_id = pr->host_id;
		p->exe_id = pr->exe_id;
		p->rank = pr->rank;
		p->local_rank = pr->local_rank;
		p->world_size = pr->world_size;
		p->have_info = true;
	} else if (rec->hdr.type == GT_REC_KERNEL && !p->nccl && rec->kernel.name_id) {
		uint32_t id = rec->kernel.name_id, v = gt_idmap_get(&rk->names, id, 0);

		if (!v) {
			size_t len = 0;
			const char *name = r ? gt_reader_string(r, id, &len) : NULL;

			v = gt_ranks_nccl_kernel(name, len) ? 1 : 2;
			if (gt_idmap_put(&rk->names, id, 0, v) < 0)
				return -ENOMEM;
		}
		p->nccl = v == 1;
	}
	return 0;
}

size_t gt_ranks_nprocs(const struct gt_ranks *rk)
{
	return rk->nprocs;
}

const struct gt_rank_proc *gt_ranks_proc_at(const struct gt_ranks *rk, size_t i)
{
	return i < rk->nprocs ? &rk->procs[i] : NULL;
}

const struct gt_rank_proc *gt_ranks_proc(const struct gt_ranks *rk, uint32_t pid)
{
	uint32_t v = gt_idmap_get(&rk->by_pid, pid, 0);

	return v ? &rk->procs[v - 1] : NULL;
}

static int i32_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

size_t gt_ranks_list(const struct gt_ranks *rk, int32_t *out, size_t max)
{
	int32_t *all = rk->nprocs ? malloc(rk->nprocs * sizeof(*all)) : NULL;
	size_t n = 0, k = 0;

	if (rk->nprocs && !all) {
		/* no room to sort: count the distinct ranks the slow way */
		for (size_t i = 0; i < rk->nprocs; i++) {
			bool seen = rk->procs[i].rank < 0;

			for (size_t j = 0; j < i && !seen; j++)
				seen = rk->procs[j].rank == rk->procs[i].rank;
			n += !seen;
		}
		return n;
	}
	for (size_t i = 0; i < rk->nprocs; i++)
		if (rk->procs[i].rank >= 0)
			all[n++] = rk->procs[i].rank;
	if (n)
		qsort(all, n, sizeof(*all), i32_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && all[i] == all[i - 1])
			continue;
		if (k < max)
			out[k] = all[i];
		k++;
	}
	free(all);
	return k;
}

int gt_ranks_info(const struct gt_ranks *rk, int32_t rank, struct gt_rank_info *info)
{
	memset(info, 0, sizeof(*info));
	info->rank = rank;
	info->local_rank = info->world_size = -1;
	for (size_t i = 0; i < rk->nprocs; i++) {
		const struct gt_rank_proc *p = &rk->procs[i];

		if (p->rank != rank || rank < 0)
			continue;
		info->processes++;
		info->records += p->records;
		if (info->local_rank < 0)
			info->local_rank = p->local_rank;
		if (info->world_size < 0)
			info->world_size = p->world_size;
		if (p->nccl)
			info->backend = "nccl";
	}
	return info->processes ? 0 : -ENOENT;
}
