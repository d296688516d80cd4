"""Seconds per ask and peak memory of one long study per sampler, up to 10,000 trials.

Each sampler runs one sequential study (in-memory storage, one thread: run it with
``OMP_NUM_THREADS=1``) on a 10-parameter mixed ``bbob-mixint`` problem (8 integers, 2 floats), in
its own process so that its peak memory is its own. Every ask is timed (``study.ask`` and the
problem's ``suggest_*`` calls, not the evaluation); at each checkpoint the median and the slowest
of the :data:`WINDOW` asks before it are recorded with the process's peak resident set size
(``getrusage(RUSAGE_SELF).ru_maxrss``) and the study's wall time so far. ``--cpu`` times the
asks in the process's CPU seconds (steadier on a machine shared with other jobs); ``--jobs 2``
runs the samplers' studies at once.

    OMP_NUM_THREADS=1 python benchmarks/long_study.py --trials 3000 --checkpoints 1000,2000,3000
    OMP_NUM_THREADS=1 nohup python benchmarks/long_study.py --cpu --jobs 2 \
        --out docs/runs/long-study &

``--out DIR`` writes ``DIR/long_study.csv`` (after every checkpoint, so a run stopped early keeps
what it measured) and ``DIR/provenance.json``; ``python -m mixbo_compare.pages`` makes it a page
(:mod:`mixbo_compare.report_long_study`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, installed or not

from mixbo_compare import provenance, report_long_study  # noqa: E402

PROBLEM = "bbob-mixint-f15-d10"
CHECKPOINTS = (1000, 2000, 5000, 10000)
WINDOW = 50  # the asks before a checkpoint that its figures summarise
DEFAULT_SAMPLERS = "mixbo,tpe"


def peak_mib() -> float:
    """This process's peak resident set size so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(name: str, problem_name: str, checkpoints: list[int], seed: int, cpu: bool) -> None:
    """Run one study to the last checkpoint, printing one JSON line per checkpoint: the median
    and slowest ask of the :data:`WINDOW` before it (``cpu``: in this process's CPU seconds,
    which other jobs on a shared machine disturb less than the wall clock), the peak memory and
    the wall-clock seconds so far."""
    import numpy as np
    import optuna

    from mixbo_compare import SAMPLERS
    from mixbo_compare.problems import get_problem
    from mixbo_compare.runner import distributions, suggest_param

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem = get_problem(problem_name)
    space = distributions(problem.space)
    study = optuna.create_study(sampler=SAMPLERS[name](seed))
    times: list[float] = []
    clock = time.process_time if cpu else time.perf_counter
    start = time.perf_counter()
    for number in range(max(checkpoints)):
        begin = clock()
        trial = study.ask()
        params = {p: suggest_param(trial, p, d) for p, d in space.items()}
        times.append(clock() - begin)
        study.tell(trial, problem(params))
        if number + 1 in checkpoints:
            last = times[-WINDOW:]
            row = {
                "n": number + 1,
                "median": float(np.median(last)),
                "max": max(last),
                "peak_mib": peak_mib(),
                "elapsed": time.perf_counter() - start,
            }
            print(json.dumps(row), flush=True)


def measure(name: str, problem: str, checkpoints: list[int], seed: int, cpu: bool):
    """Run ``name``'s study in a child process; yield each checkpoint's row as it arrives."""
    command = [sys.executable, __file__, "--child", name, "--problem", problem, "--seed", str(seed)]
    command += ["--checkpoints", ",".join(map(str, checkpoints))] + (["--cpu"] if cpu else [])
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as process:
        assert process.stdout is not None
        for line in process.stdout:
            clock = "CPU s" if cpu else "wall s"
            yield {
                "problem": problem,
                "sampler": name,
                "seed": seed,
                "clock": clock,
                **json.loads(line),
            }
    if process.returncode:
        raise RuntimeError(f"{name}'s study failed (exit status {process.returncode})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samplers", default=DEFAULT_SAMPLERS, help="comma-separated")
    parser.add_argument("--problem", default=PROBLEM)
    parser.add_argument("--checkpoints", default=",".join(map(str, CHECKPOINTS)))
    parser.add_argument("--trials", type=int, help="stop here (the checkpoints up to it count)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write OUT/long_study.csv and OUT/provenance.json")
    parser.add_argument("--cpu", action="store_true", help="time asks in CPU seconds")
    parser.add_argument("--jobs", type=int, default=1, help="samplers run at once")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    checkpoints = sorted(int(c) for c in args.checkpoints.split(","))
    if args.trials is not None:
        checkpoints = [c for c in checkpoints if c < args.trials] + [args.trials]
    if args.child:
        child(args.child, args.problem, checkpoints, args.seed, args.cpu)
        return
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        threads = os.environ.get("OMP_NUM_THREADS", "unset")
        command = f"OMP_NUM_THREADS={threads} python " + " ".join(sys.argv)
        provenance.write(args.out, provenance.collect(command, jobs=max(args.jobs, 1)))
    print(f"{args.problem}, seed {args.seed}: the {WINDOW} asks before each checkpoint, seconds")
    print("| sampler | trials | median ask | slowest ask | peak MiB | study s |")
    print("|---|---|---|---|---|---|")
    names = [s for s in args.samplers.split(",") if s]
    rows: list[dict] = []
    lock = threading.Lock()

    def run(name: str) -> None:
        for row in measure(name, args.problem, checkpoints, args.seed, args.cpu):
            with lock:
                rows.append(row)
                rows.sort(key=lambda r: (names.index(r["sampler"]), r["n"]))
                print(
                    f"| {name} | {row['n']} | {row['median']:.4f} | {row['max']:.4f} "
                    f"| {row['peak_mib']:.0f} | {row['elapsed']:.0f} |",
                    flush=True,
                )
                if args.out:
                    report_long_study.write(args.out, rows)

    with ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        for done in [pool.submit(run, name) for name in names]:
            done.result()  # a failed study fails the command


if __name__ == "__main__":
    main()
