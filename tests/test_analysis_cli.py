"""`cb-async analyse` as a user runs it: files in and out, kills, resumes, bad input, Ray."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
GAMES = DATA / "analysis-games.pgn"
POSITIONS = DATA / "analysis-positions.epd"
#: 64 positions, one batch each.
OPENINGS = Path(__file__).parent.parent / "cb_async" / "data" / "openings.epd"
NODES = "400"


def analyse(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cb_async", "analyse", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def summary(stderr: str) -> dict[str, int]:
    """The counts of the last stderr line: '... N searched, M from the journal, ...'."""
    line = stderr.strip().splitlines()[-1]
    counts = {}
    for part in line.split(": ", 2)[-1].replace(";", ",").split(", "):
        number, _, what = part.strip().partition(" ")
        if number.isdigit():
            counts[what] = int(number)
    return counts


def without_time(text: str) -> list[dict[str, object]]:
    records = [json.loads(line) for line in text.splitlines()]
    for record in records:
        record.pop("time")
    return records


def test_a_pgn_is_annotated_into_a_file_and_bad_games_are_reported_on_stderr(tmp_path: Path) -> None:
    out = tmp_path / "games.annotated.pgn"
    done = analyse(str(GAMES), "--nodes", NODES, "--workers", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0] == f"cb-async analyse: {GAMES}: game 2: illegal san: 'Qxh7' in " \
                       "rnbq1bnr/ppppkppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQ - 2 3 (skipped)"
    assert lines[1].startswith(f"cb-async analyse: {GAMES}: game 4: variant 'Atomic' is not supported")
    assert lines[2].startswith("cb-async analyse: 3 games analysed (2 skipped)")
    assert len(lines) == 3  # no progress bar: stderr is not a terminal
    text = out.read_text()
    assert text.count("[Event ") == 3 and "[%eval" in text and "[WhiteAccuracy" in text
    assert not (tmp_path / "games.annotated.pgn.partial").exists()
    assert (tmp_path / "games.annotated.pgn.journal").exists()


def test_the_progress_bar_is_drawn_on_stderr_when_asked(tmp_path: Path) -> None:
    done = analyse(str(POSITIONS), "--nodes", NODES, "--workers", "1", "--progress",
                   "--journal", str(tmp_path / "j"))
    assert done.returncode == 0
    assert "4/4" in done.stderr and "pos/s" in done.stderr


def test_epd_in_gives_epd_out_with_analysis_opcodes_and_json_lines_on_request(tmp_path: Path) -> None:
    done = analyse(str(POSITIONS), "--nodes", NODES, "--journal", str(tmp_path / "j"))
    assert done.returncode == 0, done.stderr
    header, _, body = done.stdout.partition("\n\n")
    assert header.startswith("% cb-async analyse") and "% reproducible: " in header
    assert body.splitlines()[2].startswith(f"% {POSITIONS}: line 3: not a FEN or EPD position")  # in its place
    lines = [line for line in body.splitlines() if not line.startswith("%")]
    assert len(lines) == 4
    assert lines[1].startswith("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - ") and "bm Ra8#;" in lines[1]
    assert 'id "back rank";' in lines[1] and "ce 32766;" in lines[1] and "dm 1;" in lines[1]
    for line in lines:
        assert "acd " in line and "acn " in line and "ce " in line
    assert "bm " not in lines[2] and "ce 0;" in lines[2]  # stalemate: no move to recommend
    assert "hmvc 4; fmvn 4;" in lines[3]
    as_json = analyse(str(POSITIONS), "--nodes", NODES, "--json", "--journal", str(tmp_path / "j"))
    records = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert records[0]["header"]["reproducible"] is True and records[0]["header"]["nodes"] == int(NODES)
    assert records[3] == {"line": 3, "problem": records[3]["problem"]} and "not a FEN" in records[3]["problem"]
    records = [record for record in records if "fen" in record]
    assert [record["line"] for record in records] == [1, 2, 4, 5]
    assert records[1]["best"] == "a1a8" and records[1]["score"] == {"mate": 1} and records[1]["id"] == "back rank"
    assert set(records[0]) >= {"fen", "played", "best", "score", "pv", "depth", "nodes", "time"}


def test_one_and_two_workers_write_identical_output(tmp_path: Path) -> None:
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.pgn"
        done = analyse(str(GAMES), "--nodes", NODES, "--workers", workers, "--out", str(out))
        assert done.returncode == 0, done.stderr
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]


def test_a_run_killed_with_sigkill_resumes_to_the_same_output_without_searching_anything_twice(
        tmp_path: Path) -> None:
    reference = tmp_path / "reference.pgn"
    assert analyse(str(GAMES), "--nodes", "1500", "--workers", "2", "--out", str(reference)).returncode == 0
    out = tmp_path / "killed.pgn"
    journal = tmp_path / "killed.pgn.journal"
    process = subprocess.Popen([sys.executable, "-m", "cb_async", "analyse", str(GAMES), "--nodes", "1500",
                                "--workers", "1", "--out", str(out)], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wanted = 12  # the header and eleven positions
    deadline = time.monotonic() + 120
    while not journal.exists() or len(journal.read_bytes().splitlines()) < wanted:
        assert process.poll() is None, "the job ended before it could be killed"
        assert time.monotonic() < deadline, "the journal did not grow"
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.stderr is not None
    process.stderr.close()
    assert not out.exists()  # an interrupted job never leaves a file that looks whole
    recorded = len(journal.read_bytes().splitlines()) - 1
    assert recorded >= wanted - 1
    again = analyse(str(GAMES), "--nodes", "1500", "--workers", "2", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert out.read_text() == reference.read_text()
    keys = [json.loads(line)["key"] for line in journal.read_text().splitlines()[1:]]
    assert len(keys) == len(set(keys))  # no position was recorded twice
    counts = summary(again.stderr)
    total_unique = summary(analyse(str(GAMES), "--nodes", "1500", "--out", str(tmp_path / "x.pgn"),
                                   "--journal", str(journal)).stderr)["from the journal"]
    assert counts["searched"] == len(keys) - recorded  # the second run searched only what was missing
    assert counts["positions"] == total_unique
    assert counts["searched"] + recorded == len(set(keys))


def test_ctrl_c_stops_the_job_at_once_and_the_same_command_resumes_it(tmp_path: Path) -> None:
    out = tmp_path / "interrupted.pgn"
    journal = tmp_path / "interrupted.pgn.journal"
    command = [sys.executable, "-m", "cb_async", "analyse", str(GAMES), "--nodes", "1500", "--workers", "2",
               "--out", str(out)]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not journal.exists() or len(journal.read_bytes().splitlines()) < 4:
        assert process.poll() is None, "the job ended before it could be interrupted"
        assert time.monotonic() < deadline, "the journal did not grow"
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert stderr.strip().splitlines()[-1].endswith(f"are in {journal}: run the same command again to resume")
    recorded = len(journal.read_bytes().splitlines()) - 1
    again = analyse(*command[4:])
    assert again.returncode == 0, again.stderr
    assert summary(again.stderr)["from the journal"] >= recorded


def test_an_unreadable_input_or_a_bad_cluster_address_is_one_line_and_exit_status_2(tmp_path: Path) -> None:
    missing = analyse(str(tmp_path / "nothing.pgn"))
    assert missing.returncode == 2
    assert missing.stderr == f"cb-async analyse: {tmp_path / 'nothing.pgn'}: No such file or directory\n"
    directory = analyse(str(tmp_path))
    assert directory.returncode == 2 and directory.stderr == f"cb-async analyse: {tmp_path}: is a directory\n"
    address = analyse(str(POSITIONS), "--cluster", "tcp://example")
    assert address.returncode == 2
    assert address.stderr == ("cb-async analyse: --cluster must be 'auto', 'local' or 'ray://HOST:PORT', "
                              "not 'tcp://example'\n")
    workers = analyse(str(POSITIONS), "--workers", "0")
    assert workers.returncode == 2 and workers.stderr == ("cb-async analyse: argument --workers: must be at least 1, "
                                                          "not 0 (see 'cb-async analyse --help')\n")


def test_a_journal_of_another_budget_is_refused_in_one_line(tmp_path: Path) -> None:
    journal = str(tmp_path / "j")
    assert analyse(str(POSITIONS), "--nodes", NODES, "--journal", journal).returncode == 0
    other = analyse(str(POSITIONS), "--nodes", "500", "--journal", journal)
    assert other.returncode == 2 and len(other.stderr.splitlines()) == 1
    assert "--restart" in other.stderr and "nodes 400" in other.stderr
    assert analyse(str(POSITIONS), "--nodes", "500", "--journal", journal, "--restart").returncode == 0


def test_a_host_script_without_the_main_guard_gets_a_clear_error_not_a_hang(tmp_path: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text(
        "import asyncio\n"
        "from cb_async.analysis import analyse\n"
        "from cb_async.limits import Limits\n"
        "async def main():\n"
        f"    async with analyse({str(POSITIONS)!r}, Limits(nodes=100), workers=1) as results:\n"
        "        async for result in results:\n"
        "            print(result)\n"
        "asyncio.run(main())\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert "PoolError" in done.stderr and 'if __name__ == "__main__":' in done.stderr.splitlines()[-1]


# -- Ray -----------------------------------------------------------------------------------------


def _ray_missing() -> str | None:
    try:
        import ray  # noqa: F401
    except ImportError:
        return "the ray extra is not installed for this Python (pip install 'cb-async[ray]')"
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("unshare") is None:
        return "Ray may only run here inside a loopback-only network namespace, which needs root and unshare"
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True)
    if probe.returncode != 0:
        return f"cannot make a loopback-only network namespace: {probe.stderr.decode().strip()}"
    return None


def in_loopback_namespace(command: list[str]) -> list[str]:
    """`command` inside a new network namespace with only the loopback interface up: Ray binds
    and talks on 127.0.0.1 and cannot reach (or probe) any other address."""
    quoted = " ".join("'" + part.replace("'", "'\\''") + "'" for part in command)
    return ["unshare", "-n", "sh", "-c", f"ip link set lo up && exec {quoted}"]


@pytest.mark.skipif(_ray_missing() is not None, reason=str(_ray_missing()))
def test_a_local_ray_cluster_of_two_cpus_writes_the_same_output_as_local_workers(tmp_path: Path) -> None:
    local = tmp_path / "local.pgn"
    assert analyse(str(GAMES), "--nodes", NODES, "--workers", "2", "--out", str(local)).returncode == 0
    on_ray = tmp_path / "ray.pgn"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run(in_loopback_namespace(
        [sys.executable, "-m", "cb_async", "analyse", str(GAMES), "--nodes", NODES, "--cluster", "local",
         "--workers", "2", "--out", str(on_ray)]), capture_output=True, text=True, timeout=300, env=env,
        stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert on_ray.read_text() == local.read_text()
    assert "3 games analysed (2 skipped)" in done.stderr


RAY_ACTOR_DEATH = """
import asyncio, json, os, signal, sys
import ray
ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
from cb_async.analysis import Job
from cb_async.analysis.ray_pool import RayPool
from cb_async.analysis.writers import epd_line
from cb_async.limits import Limits

async def main():
    pool = RayPool("auto", 2)
    killed = []
    def kill_an_actor(progress):
        # After the first answer, with 63 positions still to go: the dead actor is found out by
        # the position it holds or by the next one it is given, whatever the timing.
        # The actor's process dies at once, as on a lost machine (ray.kill only asks for it).
        if not killed and progress.searched == 1:
            killed.append(pool.workers[0].name)
            os.kill(pool.workers[0].pid, signal.SIGKILL)
    job = Job(sys.argv[1], Limits(nodes=int(sys.argv[2])), pool=pool, ordered=True, on_progress=kill_an_actor)
    async with job:
        texts = [epd_line(r) async for r in job.results()]
    print(json.dumps({"texts": texts, "lost": job.progress.workers_lost, "replaced": job.progress.workers_replaced,
                      "killed": killed}))

asyncio.run(main())
"""


@pytest.mark.skipif(_ray_missing() is not None, reason=str(_ray_missing()))
def test_a_ray_actor_killed_mid_job_is_replaced_and_the_output_is_the_same(tmp_path: Path) -> None:
    import asyncio

    from cb_async.analysis import Job, PositionAnalysis
    from cb_async.analysis.writers import epd_line
    from cb_async.limits import Limits

    async def local() -> list[str]:
        async with Job(str(OPENINGS), Limits(nodes=2000), workers=2, ordered=True) as job:
            return [epd_line(r) async for r in job.results() if isinstance(r, PositionAnalysis)]

    reference = asyncio.run(local())
    assert len(reference) == 64
    script = tmp_path / "actor_death.py"
    script.write_text(RAY_ACTOR_DEATH)
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    # 2,000 nodes: the 63 positions left take one actor seconds, a new actor about one.
    done = subprocess.run(in_loopback_namespace([sys.executable, str(script), str(OPENINGS), "2000"]),
                          capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["killed"] == ["actor 1"] and report["lost"] == 1 and report["replaced"] == 1
    assert report["texts"] == reference
