/* The table of exporters, and the output each one writes through. Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exporter.h"
#include "gt-config.h"
#include "output.h"
#include "steps.h"
#include "torchops.h"
#include "window.h"

extern const struct gt_exporter_ops gt_exporter_chrome;
extern const struct gt_exporter_ops gt_exporter_perfetto;
extern const struct gt_exporter_ops gt_exporter_csv;
#if GT_HAVE_SQLITE
extern const struct gt_exporter_ops gt_exporter_sqlite;
extern const struct gt_exporter_ops gt_exporter_parquet;
#endif

static const struct gt_exporter_ops *const exporters[] = {
        &gt_exporter_chrome,
        &gt_exporter_perfetto,
        &gt_exporter_csv,
#if GT_HAVE_SQLITE
        &gt_exporter_sqlite,
        &gt_exporter_parquet,
#endif
        NULL,
};

const struct gt_exporter_ops *const *gt_exporter_list(void)
{
	return exporters;
}

const struct gt_exporter_ops *gt_exporter_find(const char *name)
{
	for (const struct gt_exporter_ops *const *e = exporters; *e; e++)
		if (strcmp((*e)->name, name) == 0)
			return *e;
	return NULL;
}

struct sweep_ctx {
	const struct gt_exporter_ops *e;
	struct gt_export_options opts; /* output borrowed from the caller's */
};

static bool sweep_match(const char *name, void *ctx)
{
	const struct sweep_ctx *sc = ctx;

	return sc->e->stale(&sc->opts, name);
}

int gt_export_output_open(const struct gt_exporter_ops *e, const struct gt_export_options *opts,
                          const char *const *inputs, unsigned ninputs, struct gt_output **ret,
                          struct gt_output_error *err)
{
	unsigned flags = e->output_flags ? e->output_flags(opts) : 0;
	struct gt_output *o = NULL;
	struct sweep_ctx *sc;
	char dir[4096];
	const char *slash;
	int r;

	r = gt_output_open(opts->output, inputs, ninputs, flags, &o, err);
	if (r == -EINVAL && err && strcmp(opts->output, "-") == 0 && e->stdout_refused)
		snprintf(err->msg, sizeof(err->msg), "%s", e->stdout_refused);
	if (r < 0)
		return r;
	if (e->stale && !gt_output_is_stdout(o)) {
		/* the context lives as long as the output, which frees it */
		r = -ENOMEM;
		sc = malloc(sizeof(*sc));
		if (!sc)
			goto fail;
		sc->e = e;
		sc->opts = *opts;
		slash = strrchr(gt_output_target(o), '/');
		if (slash)
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - gt_output_target(o)),
			         gt_output_target(o));
		else
			snprintf(dir, sizeof(dir), ".");
		r = gt_output_sweep(o, slash == gt_output_target(o) ? "/" : dir, sweep_match, sc,
		                    free, err);
		if (r < 0)
			goto fail;
	}
	*ret = o;
	return 0;
fail:
	gt_output_free(o);
	return r;
}

static _Thread_local struct gt_output_error own_err;

int gt_export_own_begin(const struct gt_exporter_ops *e, const struct gt_export_options *opts,
                        struct gt_export_options *use, struct gt_output **own,
                        const char **errmsg)
{
	int r;

	*use = *opts;
	*own = NULL;
	if (opts->out)
		return 0;
	r = gt_export_output_open(e, opts, NULL, 0, own, &own_err);
	if (r < 0) {
		*errmsg = own_err.msg[0] ? own_err.msg : strerror(-r);
		return r;
	}
	use->out = *own;
	return 0;
}

int gt_export_own_end(struct gt_output *own, int ret, const char **errmsg)
{
	if (own && ret == 0) {
		ret = gt_output_commit(own, &own_err);
		if (ret < 0)
			*errmsg = own_err.msg;
	}
	gt_output_free(own);
	return ret;
}

int gt_export_run(const struct gt_exporter_ops *e, struct gt_reader *r,
                  const struct gt_export_options *opts, struct gt_export_result *res,
                  const char **errmsg)
{
	struct gt_export_options use;
	struct gt_output *own;
	int ret = gt_export_own_begin(e, opts, &use, &own, errmsg);

	if (ret == 0)
		ret = e->write(r, &use, res, errmsg);
	return gt_export_own_end(own, ret, errmsg);
}

bool gt_export_sibling(const char *output, const char *ext, char sep, bool digits,
                       const char *name)
{
	const char *base = strrchr(output, '/');
	size_t blen, elen = strlen(ext), nlen = strlen(name);
	const char *tail;

	base = base ? base + 1 : output;
	blen = strlen(base);
	if (blen >= elen && strcmp(base + blen - elen, ext) == 0)
		blen -= elen;
	if (nlen <= blen + 1 + elen || strncmp(name, base, blen) != 0 || name[blen] != sep ||
	    strcmp(name + nlen - elen, ext) != 0)
		return false;
	for (tail = name + blen + 1; digits && tail < name + nlen - elen; tail++)
		if (*tail < '0' || *tail > '9')
			return false;
	return true;
}

bool gt_export_want_steps(struct gt_reader *r, const struct gt_export_options *opts)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(r);

	/* a trace without a footer may hold NVTX ranges */
	return !opts->no_steps && (!fc || fc->records[GT_REC_NVTX] > 0);
}

static _Thread_local char steps_err[256];

int gt_export_steps(struct gt_reader *r, const struct gt_export_options *opts,
                    const struct gt_steps **ret, struct gt_steps **own, const char **errmsg)
{
	int err;

	*own = NULL;
	*ret = opts->steps;
	if (opts->steps || !gt_export_want_steps(r, opts))
		return 0;
	/* a first pass finds the steps, whose numbers depend on the whole trace */
	err = gt_steps_scan(r, opts->step_name, own);
	if (err < 0) {
		snprintf(steps_err, sizeof(steps_err), "reading the trace: %s", strerror(-err));
		*errmsg = err == -ENOMEM ? "out of memory" : steps_err;
		return err;
	}
	*ret = *own;
	return 0;
}

int gt_export_prescan(struct gt_reader *r, const struct gt_export_options *opts,
                      const struct gt_steps **ret, struct gt_steps **own,
                      struct gt_torchops **ops, const char **errmsg)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(r);
	bool want_steps = !opts->steps && gt_export_want_steps(r, opts);
	const union gt_record *rec;
	struct gt_torchops *o = NULL;
	int err;

	*own = NULL;
	*ops = NULL;
	*ret = opts->steps;
	if (fc && !fc->records[GT_REC_NVTX])
		return 0;
	err = gt_torchops_new(&o);
	if (err == 0 && want_steps)
		err = gt_steps_new(opts->step_name, own);
	if (err == 0)
		err = gt_reader_rewind(r);
	/* one pass for both: the steps' numbers and the operators depend on the whole trace */
	while (err == 0 && (err = gt_reader_next(r, &rec)) > 0) {
		err = gt_torchops_feed(o, r, rec);
		if (err == 0 && *own)
			err = gt_steps_feed(*own, r, rec);
	}
	if (err == 0 && *own)
		err = gt_steps_finish(*own);
	if (err == 0)
		err = gt_reader_rewind(r);
	if (err == 0)
		err = gt_torchops_finish(o, r);
	if (err < 0) {
		snprintf(steps_err, sizeof(steps_err), "reading the trace: %s", strerror(-err));
		*errmsg = err == -ENOMEM ? "out of memory" : steps_err;
		gt_steps_free(*own);
		*own = NULL;
		gt_torchops_free(o);
		return err;
	}
	if (*own)
		*ret = *own;
	if (gt_torchops_count(o))
		*ops = o;
	else
		gt_torchops_free(o);
	return 0;
}

int gt_export_identity(const char *path, const struct gt_window *w, char *buf, size_t bytes)
{
	char window[512];
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	gt_window_describe(w, window, sizeof(window));
	snprintf(buf, bytes, "gputrace %s; trace %llu:%llu %lld %lld.%09ld; window %s", GT_VERSION,
	         (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
	         (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
	         window[0] ? window : "all");
	return 0;
}
