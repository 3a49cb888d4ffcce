/* advise's findings written out - a table for people, JSON for scripts - with what to do about
 * each, and the gate of --fail-on. Runs in the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "text.h"

static const char *const advice[GT_ADVISE_RULE_MAX] = {
        [GT_ADVISE_PAGEABLE_MEMCPY] =
                "Pin the host buffers: allocate them with cudaMallocHost or cudaHostAlloc, or "
                "register them with cudaHostRegister (PyTorch: pin_memory=True in the "
                "DataLoader, tensor.pin_memory()), and copy with cudaMemcpyAsync "
                "(non_blocking=True), so that copies run at full bandwidth, overlap compute "
                "and leave the host free.",
        [GT_ADVISE_SYNC_MEMCPY] =
                "Copy with cudaMemcpyAsync on the stream of the work, from pinned memory, and "
                "synchronize once where the result is needed (PyTorch: .to(device, "
                "non_blocking=True); no .item(), .cpu() or printing of tensors inside a step).",
        [GT_ADVISE_SYNC_MEMSET] =
                "Use cudaMemsetAsync on the stream of the work: cudaMemset goes to the "
                "default stream and orders itself with the work of every other stream.",
        [GT_ADVISE_SYNC_API] =
                "Take the synchronizations out of the step, or move the one that is needed to "
                "its end: until each returns the host queues nothing and the GPU drains "
                "(PyTorch: torch.cuda.synchronize(), .item(), .cpu(), printing tensors; time "
                "with CUDA events instead).",
        [GT_ADVISE_STEADY_MALLOC] =
                "Allocate once and reuse: keep buffers across steps, or allocate "
                "stream-ordered (cudaMallocAsync) from a memory pool. In PyTorch the caching "
                "allocator does this unless its cache is emptied (torch.cuda.empty_cache() in "
                "the loop) or fragmented (PYTORCH_CUDA_ALLOC_CONF).",
        [GT_ADVISE_IDLE_HOST] =
                "The host does not launch work fast enough to keep the GPU busy: launch fewer, "
                "larger pieces of work (CUDA graphs, torch.compile, fused kernels), and take "
                "data loading and Python work off the path between launches (DataLoader "
                "workers, prefetching).",
        [GT_ADVISE_IDLE_EVENT] =
                "Queued work waited for an event of another stream (cudaStreamWaitEvent): "
                "check that each cross-stream dependency is needed, and order the work so "
                "that what is waited for runs early.",
        [GT_ADVISE_IDLE_OTHER] =
                "Work was queued but started late: launch latency, or a dependency the trace "
                "does not show (another process on the GPU, the legacy default stream). Open "
                "the time ranges below in gputrace view.",
        [GT_ADVISE_SHORT_KERNELS] =
                "These kernels end before the next one can be launched, so the GPU waits on "
                "the launches: fuse them (torch.compile, fused or custom kernels), capture the "
                "sequence in a CUDA graph, or give each more work (a larger batch).",
        [GT_ADVISE_COPY_EXPOSED] =
                "These copies ran while the GPU computed nothing: issue them on a stream of "
                "their own, from pinned memory, ahead of the kernels that need them "
                "(PyTorch: pin_memory=True and .to(device, non_blocking=True), prefetching "
                "the next batch while this one computes).",
        [GT_ADVISE_SERIALIZED] =
                "These kernels ran one after another on one stream, each on fewer thread "
                "blocks than the GPU has SMs, while nothing else ran: most SMs sat idle. If "
                "they do not depend on each other, launch them on separate streams (or as "
                "parallel branches of a CUDA graph), or fuse them into one larger kernel "
                "(torch.compile, horizontal fusion, batching the small operations).",
        [GT_ADVISE_SLOW_STEPS] =
                "Open the slow steps' time ranges (gputrace view --from --to) next to a "
                "typical one: data loading stalls, garbage collection, checkpoints, "
                "recompilation and synchronizations are the usual causes.",
        [GT_ADVISE_MEMORY_FULL] =
                "The GPU's memory is nearly full: expect allocator retries, fragmentation or "
                "out-of-memory errors. Shrink the batch or the activations (activation "
                "checkpointing, mixed precision) or release cached memory.",
        [GT_ADVISE_MEMORY_GROWTH] =
                "Memory in use grows with every step: something keeps a reference to each "
                "step's tensors (a list of losses kept as tensors, not .item(); a growing "
                "cache or history), or buffers are allocated and never freed.",
        [GT_ADVISE_STRAGGLER] =
                "One rank computes longer than the others in these steps, and they wait for "
                "it at the next collective: check its share of the input (load balance), its "
                "GPU (clocks, temperature) and other work on its host.",
        [GT_ADVISE_NCCL_EXPOSED] =
                "The GPU ran communication and nothing else: overlap it with compute (bucketed "
                "gradient all-reduce during the backward pass, DDP's bucket_cap_mb, FSDP's "
                "prefetching), and look at the stragglers the others wait for.",
};

const char *gt_advise_rule_advice(unsigned rule)
{
	return rule < GT_ADVISE_RULE_MAX ? advice[rule] : NULL;
}

/* "10.801093719": seconds, as --from and --to take them. */
static const char *secs(uint64_t ns, char *buf, size_t bytes)
{
	snprintf(buf, bytes, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
	return buf;
}

static void put_set(FILE *out, const char *what, const struct gt_advise_set *s, bool *first)
{
	if (!s->n)
		return;
	fprintf(out, "%s%s ", *first ? "" : "; ", what);
	for (uint32_t i = 0; i < s->n; i++)
		fprintf(out, "%s%lld", i ? ", " : "", (long long)s->v[i]);
	if (s->more)
		fputs(", ...", out);
	*first = false;
}

static double share(uint64_t cost, uint64_t span)
{
	return span ? 100.0 * (double)cost / (double)span : 0.0;
}

static void table_instance(const struct gt_advise *a, FILE *out,
                           const struct gt_advise_instance *in)
{
	char f[32], t[32], c[32], where[96];
	size_t len = 0;

	where[0] = '\0';
	if (a->ninputs > 1)
		len += (size_t)snprintf(where + len, sizeof(where) - len, "%s ",
		                        gt_text_basename(a->inputs[in->input].name));
	if (in->gpu >= 0 && len < sizeof(where))
		len += (size_t)snprintf(where + len, sizeof(where) - len, "GPU %d ", in->gpu);
	if (in->stream >= 0 && len < sizeof(where))
		len += (size_t)snprintf(where + len, sizeof(where) - len, "stream %lld ",
		                        (long long)in->stream);
	if (in->pid && len < sizeof(where))
		len += (size_t)snprintf(where + len, sizeof(where) - len, "pid %u ", in->pid);
	if (in->rank >= 0 && len < sizeof(where))
		len += (size_t)snprintf(where + len, sizeof(where) - len, "rank %d ", in->rank);
	if (in->step >= 0 && len < sizeof(where))
		snprintf(where + len, sizeof(where) - len, "step %lld ", (long long)in->step);
	fprintf(out, "    %-20s %-20s %12s  %s %s%s%s\n", secs(in->start_ns, f, sizeof(f)),
	        secs(in->end_ns, t, sizeof(t)), gt_fmt_ns((double)in->cost_ns, c, sizeof(c)), where,
	        in->what, in->source[0] ? " from " : "", in->source);
}

/* "  Code:  " and the places the instances were called from, when the traces have stacks. */
static void table_sources(FILE *out, const struct gt_advise_finding *f)
{
	char b[32];

	if (!f->nsources)
		return;
	fputs("  Code:  ", out);
	for (uint32_t k = 0; k < f->nsources; k++) {
		const struct gt_advise_source *s = &f->sources[k];

		fprintf(out, "%s%s, %" PRIu64 " time%s, %s", k ? "; " : "", s->where, s->count,
		        s->count == 1 ? "" : "s", gt_fmt_ns((double)s->cost_ns, b, sizeof(b)));
	}
	if (f->nplaces > f->nsources)
		fprintf(out, "; %u other place%s", f->nplaces - f->nsources,
		        f->nplaces - f->nsources == 1 ? "" : "s");
	if (f->located < f->count)
		fprintf(out, " (%" PRIu64 " of %" PRIu64 " with a stack)", f->located, f->count);
	fputc('\n', out);
}

static void write_table(const struct gt_advise *a, FILE *out)
{
	char b1[32], b2[32], b3[32];

	if (a->ninputs == 1)
		fprintf(out, "Advice for %s", a->inputs[0].name);
	else
		fprintf(out, "Advice for %zu traces", a->ninputs);
	fprintf(out, ": span %s, ", gt_fmt_ns((double)a->span_ns, b1, sizeof(b1)));
	if (!a->steps)
		fputs("no steps\n\n", out);
	else if (a->opts.all_steps)
		fprintf(out,
		        "%" PRIu64 " steps (all in the steady state: a window cut the run)\n\n",
		        a->steps);
	else
		fprintf(out,
		        "%" PRIu64 " steps (%" PRIu64 " in the steady state: each process's first "
		        "warms up)\n\n",
		        a->steps, a->steady_steps);
	if (!a->nfindings) {
		fputs("  nothing to report: no rule found anything\n", out);
		return;
	}
	fprintf(out, "%2s  %-16s %12s %7s %12s %8s  %s\n", "#", "Rule", "Cost", "Span %",
	        "Per step", "Count", "Finding");
	for (size_t i = 0; i < a->nfindings; i++) {
		const struct gt_advise_finding *f = &a->findings[i];

		fprintf(out, "%2zu  %-16s %12s %7.2f %12s %8" PRIu64 "  %s\n", i + 1,
		        gt_advise_rule_id(f->rule), gt_fmt_ns((double)f->cost_ns, b1, sizeof(b1)),
		        share(f->cost_ns, a->span_ns),
		        f->steps ? gt_fmt_ns((double)f->per_step_ns, b2, sizeof(b2)) : "-",
		        f->count, gt_advise_rule_title(f->rule));
	}
	for (size_t i = 0; i < a->nfindings; i++) {
		const struct gt_advise_finding *f = &a->findings[i];
		bool first = true;

		fprintf(out, "\n%zu. %s: %s\n", i + 1, gt_advise_rule_id(f->rule),
		        gt_advise_rule_title(f->rule));
		fprintf(out, "  Cost:  %s in all (%.2f%% of the span), %" PRIu64 " times",
		        gt_fmt_ns((double)f->cost_ns, b1, sizeof(b1)),
		        share(f->cost_ns, a->span_ns), f->count);
		if (f->steps)
			fprintf(out, "; %s per step over %" PRIu64 " steps (%s in them)",
			        gt_fmt_ns((double)f->per_step_ns, b2, sizeof(b2)), f->steps,
			        gt_fmt_ns((double)f->step_cost_ns, b3, sizeof(b3)));
		if (f->bytes)
			fprintf(out, "; %s", gt_fmt_bytes((double)f->bytes, b1, sizeof(b1)));
		if (f->detail[0])
			fprintf(out, "; %s", f->detail);
		fputs("\n  Where: ", out);
		put_set(out, "processes", &f->pids, &first);
		put_set(out, "ranks", &f->ranks, &first);
		put_set(out, "GPUs", &f->gpus, &first);
		put_set(out, "streams", &f->streams, &first);
		fprintf(out, "%s\n", first ? "-" : "");
		table_sources(out, f);
		fprintf(out, "  %s (seconds since the trace's zero, for --from and --to):\n",
		        f->ntop < f->count ? "Costliest" : "All");
		for (uint32_t k = 0; k < f->ntop; k++)
			table_instance(a, out, &f->top[k]);
		fprintf(out, "  Do:    %s\n", advice[f->rule]);
	}
}

static void json_str(FILE *out, const char *s)
{
	gt_text_json_fputs(out, s, strlen(s));
}

static void json_set(FILE *out, const char *key, const struct gt_advise_set *s)
{
	fprintf(out, "\"%s\":[", key);
	for (uint32_t i = 0; i < s->n; i++)
		fprintf(out, "%s%lld", i ? "," : "", (long long)s->v[i]);
	fputc(']', out);
}

static void write_json(const struct gt_advise *a, FILE *out)
{
	char b[32];

	fputs("{\"inputs\":[", out);
	for (size_t i = 0; i < a->ninputs; i++) {
		const struct gt_advise_input *in = &a->inputs[i];

		fprintf(out, "%s{\"name\":", i ? "," : "");
		json_str(out, in->name);
		fprintf(out,
		        ",\"zero_ns\":%" PRIu64 ",\"span_ns\":%" PRIu64 ",\"steps\":%" PRIu64 "}",
		        in->zero_ns, in->span_ns, in->steps);
	}
	fprintf(out,
	        "],\"span_ns\":%" PRIu64 ",\"steps\":%" PRIu64 ",\"steady_steps\":%" PRIu64
	        ",\"findings\":[",
	        a->span_ns, a->steps, a->steady_steps);
	for (size_t i = 0; i < a->nfindings; i++) {
		const struct gt_advise_finding *f = &a->findings[i];

		fprintf(out, "%s{\"rule\":\"%s\",\"title\":", i ? "," : "",
		        gt_advise_rule_id(f->rule));
		json_str(out, gt_advise_rule_title(f->rule));
		fprintf(out,
		        ",\"count\":%" PRIu64 ",\"cost_ns\":%" PRIu64 ",\"span_pct\":%.4f"
		        ",\"step_cost_ns\":%" PRIu64 ",\"steps\":%" PRIu64
		        ",\"per_step_ns\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"detail\":",
		        f->count, f->cost_ns, share(f->cost_ns, a->span_ns), f->step_cost_ns,
		        f->steps, f->per_step_ns, f->bytes);
		json_str(out, f->detail);
		fputs(",\"where\":{", out);
		json_set(out, "pids", &f->pids);
		fputc(',', out);
		json_set(out, "ranks", &f->ranks);
		fputc(',', out);
		json_set(out, "gpus", &f->gpus);
		fputc(',', out);
		json_set(out, "streams", &f->streams);
		fprintf(out, ",\"more\":%s},\"sources\":[",
		        f->pids.more || f->ranks.more || f->gpus.more || f->streams.more ? "true"
		                                                                         : "false");
		for (uint32_t k = 0; k < f->nsources; k++) {
			fprintf(out, "%s{\"where\":", k ? "," : "");
			json_str(out, f->sources[k].where);
			fprintf(out, ",\"count\":%" PRIu64 ",\"cost_ns\":%" PRIu64 "}",
			        f->sources[k].count, f->sources[k].cost_ns);
		}
		fprintf(out, "],\"places\":%u,\"located\":%" PRIu64 ",\"instances\":[",
		        f->nplaces, f->located);
		for (uint32_t k = 0; k < f->ntop; k++) {
			const struct gt_advise_instance *in = &f->top[k];

			fprintf(out,
			        "%s{\"input\":%u,\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
			        ",\"from\":\"%s\",",
			        k ? "," : "", in->input, in->start_ns, in->end_ns,
			        secs(in->start_ns, b, sizeof(b)));
			fprintf(out, "\"to\":\"%s\",\"cost_ns\":%" PRIu64 ",\"pid\":%u,\"rank\":%d",
			        secs(in->end_ns, b, sizeof(b)), in->cost_ns, in->pid, in->rank);
			fprintf(out, ",\"gpu\":%d,\"stream\":%lld,\"step\":%lld,\"what\":", in->gpu,
			        (long long)in->stream, (long long)in->step);
			json_str(out, in->what);
			fputs(",\"source\":", out);
			json_str(out, in->source);
			fputc('}', out);
		}
		fputs("],\"advice\":", out);
		json_str(out, advice[f->rule]);
		fputc('}', out);
	}
	fputs("]}\n", out);
}

int gt_advise_write(const struct gt_advise *a, FILE *out, unsigned format)
{
	if (format == GT_ADVISE_FORMAT_TABLE)
		write_table(a, out);
	else if (format == GT_ADVISE_FORMAT_JSON)
		write_json(a, out);
	else
		return -EINVAL;
	return ferror(out) ? -EIO : 0;
}

/* ---- --fail-on ---------------------------------------------------------------------------- */

int gt_advise_gate_parse(const char *s, struct gt_advise_gate *g)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	double v;

	memset(g, 0, sizeof(*g));
	if (gt_advise_rule_parse(s, &g->rule) == 0) {
		g->by_rule = true;
		return 0;
	}
	if (!*s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -EINVAL;
	if (strcmp(end, "%") == 0) {
		if (v > 100)
			return -EINVAL;
		g->by_share = true;
		g->share_bp = (uint32_t)llround(v * 100);
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0) {
			if (v * units[i].ns > 1.8e19)
				return -EINVAL;
			g->cost_ns = (uint64_t)llround(v * units[i].ns);
			return 0;
		}
	return -EINVAL;
}

const struct gt_advise_finding *gt_advise_gate_match(const struct gt_advise *a,
                                                     const struct gt_advise_gate *g)
{
	for (size_t i = 0; i < a->nfindings; i++) {
		const struct gt_advise_finding *f = &a->findings[i];

		if (g->by_rule    ? f->rule == g->rule
		    : g->by_share ? (double)f->cost_ns * 10000.0 >=
		                            (double)g->share_bp * (double)a->span_ns
		                  : f->cost_ns >= g->cost_ns)
			return f;
	}
	return NULL;
}
