"""python3 -m gputrace: recipes over many traces on Dask's distributed scheduler.

    python3 -m gputrace recipe NAME DIR_OR_FILES... [-o OUTDIR] [--scheduler ADDRESS]
                                                    [--workers N] [--rows N] [--memory]
    python3 -m gputrace recipes                        # the recipes, one line each

Each trace is read by one mapper task (gputrace.recipes.map_trace) on a worker; the client
reduces their small results and writes OUTDIR/<table>.csv (and .parquet where pyarrow is
installed), then prints a one-line summary. Without --scheduler a LocalCluster of --workers
processes (default 1, one thread each) runs on this machine. Runs in the client process."""
import argparse
import glob
import os
import sys
import time

EX_USAGE, EX_NOINPUT, EX_DATAERR = 64, 66, 65


def _inputs(args):
    paths = []
    for a in args:
        if os.path.isdir(a):
            found = sorted(glob.glob(os.path.join(a, "*.gtrace")))
            if not found:
                raise FileNotFoundError(f"{a}: no *.gtrace in it")
            paths += found
        elif os.path.exists(a):
            paths.append(a)
        else:
            raise FileNotFoundError(f"{a}: No such file or directory")
    return paths


def local_cluster(workers):
    """The LocalCluster a recipe runs on without --scheduler: `workers` processes of one
    thread, no dashboard, and no statistical profiler. Dask's profiler samples every worker
    thread each 10 ms and keeps an hour of one-second profiles (distributed.worker.profile):
    on these mappers about 0.2 MiB a second of mapping, so that a worker's RSS grew with the
    number of traces it had mapped (docs/scale.md). Nothing reads them without a dashboard."""
    import dask
    from distributed import LocalCluster

    # each worker's nanny takes a copy of the configuration when it is made
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                            dashboard_address=None)


def main(argv=None):
    from . import recipes

    p = argparse.ArgumentParser(prog="python3 -m gputrace")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("recipes", help="list the recipes")
    r = sub.add_parser("recipe", help="run a recipe over traces on Dask")
    r.add_argument("name", help="one of: " + ", ".join(recipes.RECIPES))
    r.add_argument("inputs", nargs="+", help="trace files, or folders of *.gtrace")
    r.add_argument("-o", "--output", help="folder for the CSV files (default: NAME/)")
    r.add_argument("--scheduler", help="address of a running Dask scheduler")
    r.add_argument("--workers", type=int, default=1, help="local workers (default 1)")
    r.add_argument("--rows", type=int, default=1 << 18,
                   help="records a mapper reads at a time (default 262144)")
    r.add_argument("--step", help="steps are the NVTX ranges named STEP (as stats --step)")
    r.add_argument("--memory", action="store_true",
                   help="print each worker's peak memory (its largest RSS) to stderr")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return EX_USAGE if e.code else 0
    if a.cmd == "recipes":
        for name, (what, _) in recipes.RECIPES.items():
            print(f"{name:16} {what}")
        return 0
    if a.name not in recipes.RECIPES:
        print(f"gputrace: unknown recipe {a.name!r}: one of {', '.join(recipes.RECIPES)}",
              file=sys.stderr)
        return EX_USAGE
    try:
        paths = _inputs(a.inputs)
    except FileNotFoundError as e:
        print(f"gputrace: {e}", file=sys.stderr)
        return EX_NOINPUT
    from distributed import Client, as_completed

    t0 = time.monotonic()
    cluster = None
    if a.scheduler:
        client = Client(a.scheduler)
    else:
        cluster = local_cluster(a.workers)
        client = Client(cluster)
    try:
        mapper = recipes.MAPPERS.get(a.name, recipes.map_trace)
        kw = {} if a.name in recipes.MAPPERS else {"step_name": a.step}
        futures = client.map(mapper, paths, rows=a.rows, pure=False, **kw)
        order = {f.key: i for i, f in enumerate(futures)}
        done = as_completed(futures, with_results=True)
        del futures
        results = [None] * len(order)
        # each result taken as it comes, its future let go: a worker then drops it, and holds
        # one trace's chunk at a time rather than every result it made until the last
        for f, res in done:
            results[order[f.key]] = res
            f.release()
    except Exception as e:  # a mapper's error, as the worker raised it
        print(f"gputrace: {e}", file=sys.stderr)
        return EX_DATAERR
    finally:
        client.close()
        if cluster:
            cluster.close()
    if a.memory:
        peak = {}
        for res in results:
            peak[res["worker"]] = max(peak.get(res["worker"], 0), res["peak_rss_kb"])
        for pid, kb in sorted(peak.items()):
            n = sum(1 for res in results if res["worker"] == pid)
            print(f"worker {pid}: {n} traces, peak RSS {kb / 1024:.1f} MiB", file=sys.stderr)
    tables, summary = recipes.RECIPES[a.name][1](results)
    out = a.output or a.name
    os.makedirs(out, exist_ok=True)
    try:
        import pyarrow  # noqa: F401 - Parquet only where it is installed
        parquet = True
    except ImportError:
        parquet = False
    for name, df in tables.items():
        df.to_csv(os.path.join(out, f"{name}.csv"), index=False)
        if parquet:
            df.astype(str).to_parquet(os.path.join(out, f"{name}.parquet"), index=False)
    print(f"{summary} ({len(paths)} traces, {time.monotonic() - t0:.1f} s; {out}/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
