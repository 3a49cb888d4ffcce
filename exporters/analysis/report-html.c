/* gputrace report: the page - one HTML file with its style and SVG plots inline, which asks
 * nothing of the network (no script, font, style sheet or image from outside); tooltips are
 * SVG <title> elements. Runs in the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report-int.h"
#include "text.h"

#define W     760 /* plot width and height, in SVG units */
#define H     240
#define LEFT  70 /* margins: the axes' labels */
#define RIGHT 16
#define TOP   12
#define BOT   36

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                     "#9467bd", "#8c564b", "#e377c2", "#17becf"};
#define NCOLORS (sizeof(colors) / sizeof(colors[0]))

/* Text with &, <, >, " and ' escaped. */
static void esc(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

/* "10.801093719": seconds since the trace's zero, as --from and --to take them. */
static const char *secs(uint64_t ns, char *buf, size_t bytes)
{
	snprintf(buf, bytes, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
	return buf;
}

static const char *dur(uint64_t ns, char *buf, size_t bytes)
{
	return gt_fmt_ns((double)ns, buf, bytes);
}

static double px_x(double x, double xmin, double xmax)
{
	return LEFT + (xmax > xmin ? (x - xmin) / (xmax - xmin) : 0.0) * (W - LEFT - RIGHT);
}

static double px_y(double y, double ymax)
{
	return H - BOT - (ymax > 0 ? y / ymax : 0.0) * (H - TOP - BOT);
}

/* The frame of a plot: axes, the range of each, and their names. */
static void frame(FILE *out, const char *id, double xmin, double xmax, const char *xname,
                  const char *ymax, const char *yname)
{
	fprintf(out,
	        "<svg class=\"plot\" id=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
	        "role=\"img\">\n",
	        id, W, H, W, H);
	fprintf(out,
	        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>"
	        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n",
	        LEFT, TOP, LEFT, H - BOT, LEFT, H - BOT, W - RIGHT, H - BOT);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", LEFT - 4, TOP + 10,
	        ymax);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>", LEFT - 4, H - BOT);
	fprintf(out, "<text x=\"%d\" y=\"%d\">%.6g</text>", LEFT, H - BOT + 14, xmin);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.6g</text>", W - RIGHT,
	        H - BOT + 14, xmax);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (W + LEFT) / 2, H - 6);
	esc(out, xname);
	fprintf(out,
	        "</text><text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" "
	        "text-anchor=\"middle\">",
	        (H - BOT + TOP) / 2, (H - BOT + TOP) / 2);
	esc(out, yname);
	fputs("</text>\n", out);
}

static void legend(FILE *out, size_t i, const char *label)
{
	fprintf(out, "<span class=\"key\"><span class=\"swatch\" style=\"background:%s\"></span>",
	        colors[i % NCOLORS]);
	esc(out, label);
	fputs("</span>\n", out);
}

static const char *gpu_label(const struct rep_gpu *g, char *buf, size_t bytes)
{
	if (g->name[0])
		snprintf(buf, bytes, "GPU %u (%s)", g->number, g->name);
	else
		snprintf(buf, bytes, "GPU %u", g->number);
	return buf;
}

static bool drawn(const struct rep_gpu *g)
{
	return g->win && g->final != UINT32_MAX;
}

static bool drawn_any(const struct rep_trace *t)
{
	for (size_t g = 0; g < t->ngpu_rows; g++)
		if (drawn(&t->gpus[g]))
			return true;
	return false;
}

static double t_secs(const struct rep_trace *t, uint64_t ts)
{
	return ts > t->zero_ns ? (double)(ts - t->zero_ns) / 1e9 : 0.0;
}

static void write_header(const struct gt_report *rep, FILE *out)
{
	char a[64], b[64], c[64];

	fputs("<section id=\"traces\">\n<h2>Traces</h2>\n<table>\n<tr><th>trace</th>"
	      "<th>span</th><th>records read</th><th>processes</th><th>ranks</th><th>hosts</th>"
	      "<th>GPUs</th><th>losses</th></tr>\n",
	      out);
	for (size_t i = 0; i < rep->ntraces; i++) {
		const struct rep_trace *t = &rep->traces[i];

		fputs("<tr class=\"trace\"><td>", out);
		esc(out, t->name);
		fprintf(out, "</td><td>%s</td><td>%s s to %s s</td><td>%u</td><td>",
		        dur(t->span_ns, a, sizeof(a)), secs(t->first_ns - t->zero_ns, b, sizeof(b)),
		        secs(t->last_ns - t->zero_ns, c, sizeof(c)), t->nprocs);
		esc(out, t->nranks ? t->ranks : "none");
		fputs("</td><td>", out);
		esc(out, t->hosts[0] ? t->hosts : "unknown");
		fputs("</td><td>", out);
		for (size_t g = 0, k = 0; g < t->ngpu_rows; g++) {
			char l[128];

			if (!drawn(&t->gpus[g]))
				continue;
			fputs(k++ ? ", " : "", out);
			esc(out, gpu_label(&t->gpus[g], l, sizeof(l)));
		}
		if (!t->ngpus)
			fputs("none", out);
		else if (!drawn_any(t))
			fprintf(out, "%u, no activity", t->ngpus);
		fputs("</td><td>", out);
		esc(out, t->losses);
		fputs("</td></tr>\n", out);
		if (t->damage[0]) {
			fputs("<tr><td colspan=\"8\" class=\"damage\">Damaged: ", out);
			esc(out, t->damage);
			fputs(". What was read is shown; what was skipped is missing from every "
			      "figure.</td></tr>\n",
			      out);
		}
	}
	fputs("</table>\n<p>Times are seconds since each trace's zero (docs/cli.md, "
	      "\"Time\"): paste them into <code>gputrace view</code> or <code>gputrace export "
	      "--from S --to S</code>.</p>\n</section>\n",
	      out);
}

static void write_busy(const struct gt_report *rep, FILE *out)
{
	fputs("<section id=\"busy\">\n<h2>GPU busy over time</h2>\n<p>The share of each time "
	      "bucket during which a kernel, copy, memset or graph ran on the GPU (their "
	      "union).</p>\n",
	      out);
	for (size_t i = 0; i < rep->ntraces; i++) {
		const struct rep_trace *t = &rep->traces[i];
		char id[32], l[128], a[32];
		size_t k = 0;

		fputs("<h3>", out);
		esc(out, t->name);
		fprintf(out,
		        "</h3>\n<p>From the GPU's first activity to its last, in buckets of "
		        "%s.</p>\n",
		        dur(t->bucket_ns, a, sizeof(a)));
		snprintf(id, sizeof(id), "busy-%zu", i);
		frame(out, id, t_secs(t, t->plot_from_ns), t_secs(t, t->plot_to_ns),
		      "seconds since the trace's zero", "100%", "GPU busy");
		for (size_t g = 0; g < t->ngpu_rows; g++) {
			const struct rep_gpu *gg = &t->gpus[g];

			if (!drawn(gg))
				continue;
			fprintf(out,
			        "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
			        "data-label=\"GPU %u\" points=\"",
			        colors[k % NCOLORS], gg->number);
			for (uint32_t b = 0; b < t->nbuckets; b++) {
				uint64_t w = gg->win[b].end_ns - gg->win[b].start_ns;
				double f = w ? (double)gg->win[b].compute_ns / (double)w : 0.0;
				double x = t_secs(t, gg->win[b].start_ns);

				fprintf(out, "%s%.1f,%.1f", b ? " " : "",
				        px_x(x, t_secs(t, t->plot_from_ns),
				             t_secs(t, t->plot_to_ns)),
				        px_y(f > 1.0 ? 1.0 : f, 1.0));
			}
			fprintf(out, "\"><title>%s</title></polyline>\n",
			        gpu_label(gg, l, sizeof(l)));
			k++;
		}
		fputs("</svg>\n<div class=\"legend\">", out);
		for (size_t g = 0, j = 0; g < t->ngpu_rows; g++)
			if (drawn(&t->gpus[g]))
				legend(out, j++, gpu_label(&t->gpus[g], l, sizeof(l)));
		if (!k)
			fputs("No GPU activity in this trace.", out);
		fputs("</div>\n", out);
	}
	fputs("</section>\n", out);
}

static double clip(uint64_t v, uint64_t max)
{
	return (double)(v < max ? v : max);
}

static void write_steps(const struct gt_report *rep, FILE *out)
{
	const struct gt_rankstats *rs = rep->rs;
	int64_t nmin = INT64_MAX, nmax = INT64_MIN;
	uint64_t dmax = 0, wmax = 0; /* the longest step; the longest first step (warm-up) */
	size_t k = 0;
	char a[32], b[32], c[32], l[64];

	fputs("<section id=\"steps\">\n<h2>Time per step</h2>\n", out);
	for (size_t i = 0; i < rs->ngroups; i++) {
		const struct gt_rankstats_group *g = rs->groups[i];

		for (size_t s = 0; s < g->nsteps; s++) {
			uint64_t d = g->steps[s].end_ns - g->steps[s].start_ns;

			/* a rank's first step warms up, often 100 times longer than the rest: it
			 * would flatten them, so the scale is the others' when there are some */
			if (s == 0 && g->nsteps >= 3)
				wmax = d > wmax ? d : wmax;
			else
				dmax = d > dmax ? d : dmax;
			nmin = g->step_numbers[s] < nmin ? g->step_numbers[s] : nmin;
			nmax = g->step_numbers[s] > nmax ? g->step_numbers[s] : nmax;
		}
	}
	if (nmin > nmax) {
		fputs("<p>No steps: no NVTX range of the traces looks like a training step "
		      "(ProfilerStep#N, step, train_step, iteration; or give --step NAME).</p>\n"
		      "</section>\n",
		      out);
		return;
	}
	fputs("<p>Each step's duration on each rank (its NVTX range), by step number.", out);
	if (wmax > dmax)
		fprintf(out,
		        " The first step of a rank warms up: one that took longer than every other "
		        "step (up to %s) is drawn at the top, off the scale.",
		        dur(wmax, a, sizeof(a)));
	else
		dmax = dmax > wmax ? dmax : wmax;
	fputs("</p>\n", out);
	snprintf(a, sizeof(a), "%.3f ms", (double)dmax / 1e6);
	frame(out, "steps-plot", (double)nmin, (double)nmax, "step", a, "step time");
	for (size_t i = 0; i < rs->ngroups; i++) {
		const struct gt_rankstats_group *g = rs->groups[i];

		if (!g->nsteps)
			continue;
		if (g->rank >= 0)
			snprintf(l, sizeof(l), "rank %d", g->rank);
		else
			snprintf(l, sizeof(l), "pid %u", g->pid);
		fprintf(out,
		        "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" data-label=\"%s\" "
		        "points=\"",
		        colors[k % NCOLORS], l);
		for (size_t s = 0; s < g->nsteps; s++)
			fprintf(out, "%s%.1f,%.1f", s ? " " : "",
			        px_x((double)g->step_numbers[s], (double)nmin, (double)nmax),
			        px_y(clip(g->steps[s].end_ns - g->steps[s].start_ns, dmax),
			             (double)dmax));
		fprintf(out, "\"><title>%s</title></polyline>\n", l);
		for (size_t s = 0; s < g->nsteps; s++)
			fprintf(out,
			        "<circle class=\"step\" r=\"3\" fill=\"%s\" cx=\"%.1f\" "
			        "cy=\"%.1f\"><title>%s step %" PRId64 ": %s</title></circle>\n",
			        colors[k % NCOLORS],
			        px_x((double)g->step_numbers[s], (double)nmin, (double)nmax),
			        px_y(clip(g->steps[s].end_ns - g->steps[s].start_ns, dmax),
			             (double)dmax),
			        l, g->step_numbers[s],
			        dur(g->steps[s].end_ns - g->steps[s].start_ns, a, sizeof(a)));
		k++;
	}
	fputs("</svg>\n<div class=\"legend\">", out);
	for (size_t i = 0, j = 0; i < rs->ngroups; i++) {
		const struct gt_rankstats_group *g = rs->groups[i];

		if (!g->nsteps)
			continue;
		if (g->rank >= 0)
			snprintf(l, sizeof(l), "rank %d", g->rank);
		else
			snprintf(l, sizeof(l), "pid %u", g->pid);
		legend(out, j++, l);
	}
	fputs("</div>\n<table>\n<tr><th>rank</th><th>trace</th><th>step</th><th>from (s)</th>"
	      "<th>to (s)</th><th>duration</th><th>GPU compute</th></tr>\n",
	      out);
	for (size_t i = 0; i < rs->ngroups; i++) {
		const struct gt_rankstats_group *g = rs->groups[i];
		const struct rep_trace *t =
		        g->step_input < rep->ntraces ? &rep->traces[g->step_input] : NULL;
		uint64_t zero = t ? t->zero_ns : 0;

		for (size_t s = 0; s < g->nsteps; s++) {
			const struct gt_busy_window *w = &g->steps[s];

			if (g->rank >= 0)
				fprintf(out, "<tr class=\"step\"><td>%d</td><td>", g->rank);
			else
				fprintf(out, "<tr class=\"step\"><td>pid %u</td><td>", g->pid);
			esc(out, t ? t->name : "");
			fprintf(out,
			        "</td><td>%" PRId64 "</td><td>%s</td><td>%s</td><td>%s</td>"
			        "<td>%s</td></tr>\n",
			        g->step_numbers[s], secs(w->start_ns - zero, a, sizeof(a)),
			        secs(w->end_ns - zero, b, sizeof(b)),
			        dur(w->end_ns - w->start_ns, c, sizeof(c)),
			        dur(w->compute_ns, l, sizeof(l)));
		}
	}
	fputs("</table>\n</section>\n", out);
}

/* Horizontal bars of names by time, the largest first. */
static void bars(FILE *out, const char *id, const struct rep_name *v, size_t n, const char *unit)
{
	const int row = 22, lab = 330;
	uint64_t max = n ? v[0].total_ns : 0;
	char a[32];

	fprintf(out,
	        "<svg class=\"plot\" id=\"%s\" viewBox=\"0 0 %d %zu\" width=\"%d\" "
	        "height=\"%zu\" role=\"img\">\n",
	        id, W, n * (size_t)row + 4, W, n * (size_t)row + 4);
	for (size_t i = 0; i < n; i++) {
		double w = max ? (double)v[i].total_ns / (double)max * (W - lab - 90) : 0.0;
		char shown[48];

		snprintf(shown, sizeof(shown), "%s", v[i].label ? v[i].label : v[i].name);
		if (strlen(v[i].label ? v[i].label : v[i].name) >= sizeof(shown))
			memcpy(shown + sizeof(shown) - 4, "...", 4);
		fprintf(out, "<text x=\"%d\" y=\"%zu\" text-anchor=\"end\">", lab - 6,
		        i * (size_t)row + 15);
		esc(out, shown);
		fprintf(out,
		        "</text><rect class=\"bar\" x=\"%d\" y=\"%zu\" width=\"%.1f\" "
		        "height=\"%d\" "
		        "fill=\"%s\"><title>",
		        lab, i * (size_t)row + 3, w < 1.0 ? 1.0 : w, row - 6, colors[0]);
		esc(out, v[i].name);
		fprintf(out, ": %s in %" PRIu64 " %s</title></rect>",
		        dur(v[i].total_ns, a, sizeof(a)), v[i].count, unit);
		fprintf(out, "<text x=\"%.1f\" y=\"%zu\">%s</text>\n",
		        lab + (w < 1.0 ? 1.0 : w) + 4, i * (size_t)row + 15, a);
	}
	fputs("</svg>\n", out);
}

static void write_kernels(const struct gt_report *rep, FILE *out)
{
	char id[32], a[32];

	fputs("<section id=\"kernels\">\n<h2>Top kernels by GPU time</h2>\n", out);
	for (size_t i = 0; i < rep->ntraces; i++) {
		const struct rep_trace *t = &rep->traces[i];

		fputs("<h3>", out);
		esc(out, t->name);
		fputs("</h3>\n", out);
		if (!t->ntop_kernels) {
			fputs("<p>No kernels.</p>\n", out);
			continue;
		}
		fprintf(out,
		        "<p>%" PRIu64 " kernels of %zu names, %s of GPU time in all; the %zu "
		        "largest:</p>\n",
		        t->kernels, t->nkernel_names, dur(t->kernel_ns, a, sizeof(a)),
		        t->ntop_kernels);
		snprintf(id, sizeof(id), "kernels-%zu", i);
		bars(out, id, t->top_kernels, t->ntop_kernels, "launches");
	}
	fputs("</section>\n", out);
}

static void write_memory(const struct gt_report *rep, FILE *out)
{
	fputs("<section id=\"memory\">\n<h2>Device memory in use over time</h2>\n<p>Bytes "
	      "allocated through CUDA and not yet freed, per GPU, as the trace's allocations and "
	      "frees add up, over the time of the busy plot (what was allocated before tracing "
	      "began is not counted; a caching allocator's pool counts as in use).</p>\n",
	      out);
	for (size_t i = 0; i < rep->ntraces; i++) {
		const struct rep_trace *t = &rep->traces[i];
		uint64_t peak = 0;
		char id[32], l[128], a[32];
		size_t k = 0;

		for (size_t g = 0; g < t->ngpu_rows; g++)
			if (drawn(&t->gpus[g]) && t->gpus[g].has_mem && t->gpus[g].mem_peak > peak)
				peak = t->gpus[g].mem_peak;
		fputs("<h3>", out);
		esc(out, t->name);
		fputs("</h3>\n", out);
		if (!peak) {
			fputs("<p>No device memory allocations in this trace.</p>\n", out);
			continue;
		}
		snprintf(id, sizeof(id), "memory-%zu", i);
		frame(out, id, t_secs(t, t->plot_from_ns), t_secs(t, t->plot_to_ns),
		      "seconds since the trace's zero", gt_fmt_bytes((double)peak, a, sizeof(a)),
		      "in use");
		for (size_t g = 0; g < t->ngpu_rows; g++) {
			const struct rep_gpu *gg = &t->gpus[g];
			uint64_t v = 0;

			if (!drawn(gg) || !gg->has_mem)
				continue;
			fprintf(out,
			        "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
			        "data-label=\"GPU %u\" points=\"",
			        colors[k % NCOLORS], gg->number);
			for (uint32_t b = 0; b < t->nbuckets; b++) {
				v = gg->mem_seen[b] ? gg->mem[b] : v;
				fprintf(out, "%s%.1f,%.1f", b ? " " : "",
				        px_x(t_secs(t, gg->win[b].start_ns),
				             t_secs(t, t->plot_from_ns), t_secs(t, t->plot_to_ns)),
				        px_y((double)v, (double)peak));
			}
			fprintf(out, "\"><title>%s: peak %s</title></polyline>\n",
			        gpu_label(gg, l, sizeof(l)),
			        gt_fmt_bytes((double)gg->mem_peak, a, sizeof(a)));
			k++;
		}
		fputs("</svg>\n<div class=\"legend\">", out);
		for (size_t g = 0, j = 0; g < t->ngpu_rows; g++)
			if (drawn(&t->gpus[g]) && t->gpus[g].has_mem)
				legend(out, j++, gpu_label(&t->gpus[g], l, sizeof(l)));
		fputs("</div>\n", out);
	}
	fputs("</section>\n", out);
}

static void write_nvtx(const struct gt_report *rep, FILE *out)
{
	char id[32];

	fputs("<section id=\"nvtx\">\n<h2>GPU time per NVTX range</h2>\n<p>The GPU work "
	      "launched inside each range, projected onto it (first start to last end), summed "
	      "over the range's instances, as <code>gputrace stats -r nvtx-gpu</code> gives "
	      "it.</p>\n",
	      out);
	for (size_t i = 0; i < rep->ntraces; i++) {
		const struct rep_trace *t = &rep->traces[i];

		fputs("<h3>", out);
		esc(out, t->name);
		fputs("</h3>\n", out);
		if (!t->ntop_nvtx) {
			fputs("<p>No NVTX range launched GPU work.</p>\n", out);
			continue;
		}
		fprintf(out,
		        "<p>%" PRIu64 " ranges; %" PRIu64 " of %" PRIu64 " GPU operations launched "
		        "inside one; %zu range names, the %zu largest:</p>\n",
		        t->nvtx_ranges, t->nvtx_ops_in_ranges, t->nvtx_ops, t->nnvtx_names,
		        t->ntop_nvtx);
		snprintf(id, sizeof(id), "nvtx-%zu", i);
		bars(out, id, t->top_nvtx, t->ntop_nvtx, "instances");
	}
	fputs("</section>\n", out);
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

static void write_findings(const struct gt_report *rep, FILE *out)
{
	const struct gt_advise *a = rep->adv;
	char c[32], p[32], f[32], t[32];

	fputs("<section id=\"findings\">\n<h2>Findings</h2>\n", out);
	if (!a->nfindings) {
		fputs("<p>No finding: none of <code>gputrace advise</code>'s rules matched.</p>\n"
		      "</section>\n",
		      out);
		return;
	}
	fprintf(out,
	        "<p>What <code>gputrace advise</code> finds, costliest first (%zu). The time "
	        "ranges are the costliest instances of each.</p>\n",
	        a->nfindings);
	for (size_t i = 0; i < a->nfindings; i++) {
		const struct gt_advise_finding *fd = &a->findings[i];
		bool first = true;

		fprintf(out, "<div class=\"finding\" data-rule=\"%s\">\n<h3>",
		        gt_advise_rule_id(fd->rule));
		esc(out, gt_advise_rule_title(fd->rule));
		fprintf(out,
		        " <code>%s</code></h3>\n<p><b>Cost:</b> %s in all (%.1f%% of the span), "
		        "%" PRIu64 " times",
		        gt_advise_rule_id(fd->rule), dur(fd->cost_ns, c, sizeof(c)),
		        a->span_ns ? 100.0 * (double)fd->cost_ns / (double)a->span_ns : 0.0,
		        fd->count);
		if (fd->steps)
			fprintf(out, "; %s per step over %" PRIu64 " steps",
			        dur(fd->per_step_ns, p, sizeof(p)), fd->steps);
		fputs(".", out);
		if (fd->detail[0]) {
			fputs(" ", out);
			esc(out, fd->detail);
			fputs(".", out);
		}
		fputs("</p>\n<p><b>Where:</b> ", out);
		put_set(out, "pid", &fd->pids, &first);
		put_set(out, "rank", &fd->ranks, &first);
		put_set(out, "GPU", &fd->gpus, &first);
		put_set(out, "stream", &fd->streams, &first);
		if (first)
			fputs("the whole run", out);
		fputs(".</p>\n", out);
		if (fd->nsources) {
			fputs("<p><b>Code:</b> ", out);
			for (uint32_t j = 0; j < fd->nsources; j++) {
				fputs(j ? "; <code>" : "<code>", out);
				esc(out, fd->sources[j].where);
				fprintf(out, "</code> %" PRIu64 " times, %s", fd->sources[j].count,
				        dur(fd->sources[j].cost_ns, c, sizeof(c)));
			}
			fputs(".</p>\n", out);
		}
		fputs("<p><b>Do:</b> ", out);
		esc(out, gt_advise_rule_advice(fd->rule));
		fputs("</p>\n<ul>\n", out);
		for (uint32_t j = 0; j < fd->ntop; j++) {
			const struct gt_advise_instance *in = &fd->top[j];

			fprintf(out, "<li class=\"range\"><code>--from %s --to %s</code> ",
			        secs(in->start_ns, f, sizeof(f)), secs(in->end_ns, t, sizeof(t)));
			if (a->ninputs > 1 && in->input < a->ninputs) {
				esc(out, gt_text_basename(a->inputs[in->input].name));
				fputs(" ", out);
			}
			if (in->gpu >= 0)
				fprintf(out, "GPU %d ", in->gpu);
			if (in->stream >= 0)
				fprintf(out, "stream %lld ", (long long)in->stream);
			if (in->pid)
				fprintf(out, "pid %u ", in->pid);
			if (in->rank >= 0)
				fprintf(out, "rank %d ", in->rank);
			if (in->step >= 0)
				fprintf(out, "step %lld ", (long long)in->step);
			fprintf(out, "(%s) ", dur(in->cost_ns, c, sizeof(c)));
			esc(out, in->what);
			if (in->source[0]) {
				fputs(" from <code>", out);
				esc(out, in->source);
				fputs("</code>", out);
			}
			fputs("</li>\n", out);
		}
		fputs("</ul>\n</div>\n", out);
	}
	fputs("</section>\n", out);
}

static const char style[] =
        "body{font-family:sans-serif;margin:1.5em auto;max-width:820px;color:#222}"
        "h2{border-bottom:1px solid #ccc;margin-top:1.6em}"
        "table{border-collapse:collapse;font-size:90%}"
        "td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}"
        "svg.plot{display:block;font-size:11px;background:#fafafa}"
        "svg .axis{stroke:#888}polyline{stroke-width:1.5}"
        ".legend{font-size:90%;margin:4px 0 12px}.key{margin-right:1em}"
        ".swatch{display:inline-block;width:10px;height:10px;margin-right:4px}"
        ".damage{color:#a00}.finding{border-left:4px solid #d62728;padding-left:10px;"
        "margin:1em 0}code{background:#f0f0f0}";

int gt_report_write_html(const struct gt_report *rep, FILE *out)
{
	fprintf(out,
	        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	        "<title>gputrace report</title>\n<style>%s</style>\n</head>\n<body>\n"
	        "<h1>gputrace report</h1>\n",
	        style);
	write_header(rep, out);
	write_busy(rep, out);
	write_steps(rep, out);
	write_kernels(rep, out);
	write_memory(rep, out);
	write_nvtx(rep, out);
	write_findings(rep, out);
	fputs("</body>\n</html>\n", out);
	return ferror(out) ? -EIO : 0;
}
