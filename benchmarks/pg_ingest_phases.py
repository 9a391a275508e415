"""Where a PostgreSQL ingest's time goes: wall, client CPU and server CPU per write phase.

    .venv/bin/python benchmarks/pg_ingest_phases.py 100000            # chunks (bench scale's synthetic rows)
    .venv/bin/python benchmarks/pg_ingest_phases.py 20000 --variants  # then rebuild the HNSW index several ways

Phases are the store's own (`PostgresStore.on_write_phase`): prepare (hash, vectors encoded),
copy_chunks (text analysis + binary COPY, streamed), copy_postings (server-side INSERT ...
SELECT + term_df COPY), hnsw_build, commit, analyze. Server CPU is the private server's
postmaster and every child (`server_cpu_seconds`), so it does not depend on the machine's load
the way wall time does. Needs the test extra (a private PostgreSQL). Prints one JSON line.
"""
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from vouched.eval.bench_scale import DIM, load_sources, synth_corpus  # noqa: E402
from vouched.store.pgserver import BENCH_SETTINGS, local_postgres, server_cpu_seconds  # noqa: E402
from vouched.store.postgres import PostgresStore  # noqa: E402

VARIANTS = {  # name: (SET statements before the build, index options)
    "default (2 parallel workers)": ([], ""),
    "serial": (["SET max_parallel_maintenance_workers = 0"], ""),
    "ef_construction 32": ([], " WITH (ef_construction = 32)"),
    "m 12": ([], " WITH (m = 12)"),
}


def main() -> None:
    n = int(sys.argv[1])
    variants = "--variants" in sys.argv
    src = load_sources(Path(__file__).resolve().parent.parent.parent / "shared" / "benchmarks")
    chunks, vecs, _ = synth_corpus(src, n)
    out: dict = {"n": n, "load_before": os.getloadavg(), "phases": {}}
    with local_postgres(settings=BENCH_SETTINGS) as pg:
        st = PostgresStore(pg.dsn, keep_versions=1)
        st.migrations()  # connect + migrate outside the measurement
        mark = {"t": 0.0, "c": 0.0, "s": 0.0}

        def snap() -> None:
            mark.update(t=time.perf_counter(), c=time.process_time(), s=server_cpu_seconds(pg) or 0.0)

        def on_phase(name: str) -> None:
            t, c, s = time.perf_counter(), time.process_time(), server_cpu_seconds(pg) or 0.0
            out["phases"][name] = {"wall_s": round(t - mark["t"], 2), "client_cpu_s": round(c - mark["c"], 2),
                                   "server_cpu_s": round(s - mark["s"], 2)}
            snap()

        st.on_write_phase = on_phase
        snap()
        t0, c0, s0 = time.perf_counter(), time.process_time(), server_cpu_seconds(pg) or 0.0
        with st.new_version(embedding_model="synthetic-384", dim=DIM) as w:
            w.add(chunks, vecs)
        wall = time.perf_counter() - t0
        out["total"] = {"wall_s": round(wall, 2), "client_cpu_s": round(time.process_time() - c0, 2),
                        "server_cpu_s": round((server_cpu_seconds(pg) or 0.0) - s0, 2),
                        "chunks_per_s": round(n / wall, 1),
                        "chunks_per_s_without_hnsw": round(n / (wall - out["phases"].get("hnsw_build", {}).get("wall_s", 0)), 1)}
        out["build_times"] = w.build_times
        if variants:
            vid = st.current_version().id
            out["variants"] = {}
            for name, (sets, opts) in VARIANTS.items():
                with st._conn() as conn, conn.transaction():
                    conn.execute(f"DROP INDEX IF EXISTS chunks_v{vid}_hnsw")
                    conn.execute(f"SET LOCAL maintenance_work_mem = '{st.maintenance_work_mem}'")
                    for s in sets:
                        conn.execute(s.replace("SET ", "SET LOCAL ", 1))
                    t, s = time.perf_counter(), server_cpu_seconds(pg) or 0.0
                    conn.execute(f"CREATE INDEX chunks_v{vid}_hnsw ON chunks USING hnsw ((vec::vector({DIM})) vector_cosine_ops)"
                                 f"{opts} WHERE version_id = {vid}")
                    out["variants"][name] = {"wall_s": round(time.perf_counter() - t, 2),
                                             "server_cpu_s": round((server_cpu_seconds(pg) or 0.0) - s, 2)}
                    print(name, out["variants"][name], file=sys.stderr, flush=True)
        st.close()
    out["load_after"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
