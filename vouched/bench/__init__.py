"""Every benchmark: condition files and `vouched bench run`, the retrieval, abstention, verify,
fabricated and scale benches behind `vouched bench …`, and the measurement scripts
(gate, l1, path_walk, pg_*, …), each runnable as `python -m vouched.bench.<name>`;
`benchmarks/<name>.py` are shims that call the same `main`.

`vouched bench retrieval` calls `vouched.bench.cli.bench_retrieval_command`. Nothing is
imported here, so `python -m vouched.bench.gate` loads only the gate's benchmark.
"""
