"""Per-step cost of `epistemic run` side by side with mini-swe-agent 2.4.6, in one run: each
harness drives its own scripted model through N steps of `true`, then finishes.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_peer.py                         # 50, 200, 1,000, 10,000 steps
    .venv/bin/python bench/bench_peer.py --quick                 # 50 and 200 steps, 2 rounds
    .venv/bin/python bench/bench_peer.py --steps 50,200,1000 --peer-cli-max 1000
    .venv/bin/python bench/bench_peer.py --quick --no-peer       # ours and the floor only

mini-swe-agent is installed (pip, from the registry) into a virtualenv of its own,
`~/.cache/epistemic-bench/mini-swe-agent-2.4.6` unless `--peer-venv DIR`, and reused when
present. Its side runs three ways, each with its scripted model (`DeterministicModel`) answering
N times ```` ```mswea_bash_command\\ntrue\\n``` ```` then
`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`, over `mini_textbased.yaml`:

* *its `mini` command*, as people run it: `mini -c mini_textbased.yaml -c CONFIG -y
  --exit-immediately -t TASK -o TRAJECTORY` (its interactive agent in yolo mode, printing
  each step to a pipe, the trajectory rewritten after every step as the command does);
* *agent loop, trajectory saved*: a small driver with `DefaultAgent` and
  `LocalEnvironment(cwd=WS)`, `output_path` set (no console output);
* *agent loop only*: the same driver without a trajectory: mini's loop and its spawn alone.

Our side is `epistemic run --model replay:SCRIPT -C WS` with confinement and observation on, as
by default (the journal's first line names the confinement mechanism; the output says what was
in force). WS is a fresh `git init` folder in the temp dir for every run, of either harness.

Per-step cost = (wall(N) - wall(0 steps)) / N, wall from spawn to exit of the process, so
interpreter start-up and one-time setup cancel out; both walls come from the same round, and
the rounds are interleaved (ours and mini's three ways, in an order that rotates, then
`bash -c true` spawned 20 times: the floor), the median over rounds reported.

Targets (issue 30): ours at most 0.5x mini's per-step cost, read against its `mini` command
(that is how people use it; the ratios to its loop, with and without the trajectory, are
printed too), and ours at most 4x a
`bash -c true` spawn measured in the same run. The exit status is 0 once the tables are
printed, whatever the verdicts (they are in the tables).

Mini with its trajectory saved grows quadratically with the session (it rewrites the whole
trajectory after each step): from its cost at 1,000 steps, one 10,000-step session would take
about 40 minutes here; even its loop alone took over 8 minutes for one (its per-step cost
grows too). `--peer-cli-max 1000` leaves both saving ways out above 1,000 steps, and the table
says so; the peer target is then read against mini's loop alone (the stricter reading).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from scripted_sessions import (
    InForce,
    bash_floor,
    load_average,
    machine,
    new_workspace,
    parse_counts,
    print_table,
    remove,
    run_session,
    verdict,
    write_script,
)

PEER = "mini-swe-agent"
PEER_VERSION = "2.4.6"
DEFAULT_VENV = Path.home() / ".cache" / "epistemic-bench" / f"{PEER}-{PEER_VERSION}"
STEPS = (50, 200, 1000, 10000)
QUICK_STEPS = (50, 200)
PEER_TARGET, FLOOR_TARGET = 0.5, 4.0
OURS, COMMAND = "ours", "mini (its `mini` command)"
CLI, LOOP = "mini (agent loop, trajectory saved)", "mini (agent loop only)"


#: The `mini` command's own config beside mini_textbased.yaml: the scripted model's answers.
def command_config(steps: int) -> str:
    probe = "Check that the shell still answers.\n\n```mswea_bash_command\ntrue\n```"
    submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    step = {"role": "assistant", "content": probe, "extra": {"actions": [{"command": "true"}]}}
    done = {
        "role": "assistant",
        "content": f"Done.\n\n```mswea_bash_command\n{submit}\n```",
        "extra": {"actions": [{"command": submit}]},
    }
    model = {"model_class": "deterministic", "model_name": "deterministic"}
    model["outputs"] = [step] * steps + [done]
    return json.dumps({"model": model, "agent": {"step_limit": 0, "cost_limit": 0}})


#: Runs in the peer's venv: argv is steps, workspace, trajectory path or "-".
DRIVER = """
import sys
from pathlib import Path

import yaml
from minisweagent.agents.default import DefaultAgent
from minisweagent.config import get_config_path
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.test_models import DeterministicModel, make_output

steps, workspace, trajectory = int(sys.argv[1]), sys.argv[2], sys.argv[3]
config = yaml.safe_load(get_config_path("mini_textbased").read_text())
agent_config = {k: v for k, v in config["agent"].items() if k != "mode"}
agent_config.update(step_limit=0, cost_limit=0)
if trajectory != "-":
    agent_config["output_path"] = Path(trajectory)
probe = "Check that the shell still answers.\\n\\n```mswea_bash_command\\ntrue\\n```"
submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
outputs = [make_output(probe, [{"command": "true"}]) for _ in range(steps)]
done = f"Done.\\n\\n```mswea_bash_command\\n{submit}\\n```"
outputs.append(make_output(done, [{"command": submit}]))
template = config["model"]["observation_template"]
model = DeterministicModel(outputs=outputs, observation_template=template)
env = LocalEnvironment(cwd=workspace, env=config.get("environment", {}).get("env", {}))
agent = DefaultAgent(model, env, **agent_config)
result = agent.run("Check that the shell answers, once per step, then finish.")
if result.get("exit_status") != "Submitted" or agent.n_calls != steps + 1:
    sys.exit(f"mini: {result.get('exit_status')} after {agent.n_calls} model calls")
"""


def peer_python(venv: Path) -> Path:
    """The peer venv's python, creating the venv and installing the pinned peer if needed."""
    python = venv / "bin" / "python"
    check = [
        str(python),
        "-c",
        "import importlib.metadata as m; print(m.version('mini-swe-agent'))",
    ]
    if python.exists():
        found = subprocess.run(check, capture_output=True, text=True, check=False)
        if found.returncode == 0 and found.stdout.strip() == PEER_VERSION:
            return python
    print(f"bench: installing {PEER} {PEER_VERSION} into {venv} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, f"{PEER}=={PEER_VERSION}"], check=True)
    subprocess.run(check, check=True, capture_output=True)
    return python


def mini_runner(python: Path, driver: Path, folder: Path, save: bool) -> Callable[[int], float]:
    """Seconds from spawn to exit of one mini session of `steps` steps in a fresh workspace."""
    env = {**os.environ, "MSWEA_SILENT_STARTUP": "1"}

    def run(steps: int) -> float:
        workspace = new_workspace("bench-mini-")
        trajectory = str(folder / "last.traj.json") if save else "-"
        argv = [str(python), str(driver), str(steps), str(workspace), trajectory]
        started = time.perf_counter()
        done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - started
        remove(workspace)
        if done.returncode != 0:
            tail = done.stderr.decode(errors="replace")[-800:]
            raise SystemExit(f"bench: the mini driver exited {done.returncode}: {tail}")
        return elapsed

    return run


def command_runner(python: Path, folder: Path) -> Callable[[int], float]:
    """Seconds from spawn to exit of the `mini` command (yolo, exit at once, its trajectory
    saved where -o says), output to a pipe: how people run it, with its console output."""
    mini = python.with_name("mini")
    env = {**os.environ, "MSWEA_SILENT_STARTUP": "1", "MSWEA_CONFIGURED": "true"}

    def run(steps: int) -> float:
        workspace = new_workspace("bench-mini-")
        config = folder / f"mini-{steps}.yaml"  # JSON, which YAML reads
        if not config.exists():
            config.write_text(command_config(steps), encoding="utf-8")
        argv = [str(mini), "-c", "mini_textbased.yaml", "-c", str(config)]
        argv += ["-c", f"environment.cwd={workspace}", "-y", "--exit-immediately"]
        argv += ["-t", "Check that the shell answers, once per step, then finish."]
        trajectory = folder / "last-command.traj.json"
        argv += ["-o", str(trajectory)]
        started = time.perf_counter()
        done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        elapsed = time.perf_counter() - started
        remove(workspace)
        info = json.loads(trajectory.read_text("utf-8"))["info"] if done.returncode == 0 else {}
        calls = info.get("model_stats", {}).get("api_calls")
        if info.get("exit_status") != "Submitted" or calls != steps + 1:
            tail = done.stdout.decode(errors="replace")[-800:]
            raise SystemExit(f"bench: the mini command exited {done.returncode}: {tail}")
        return elapsed

    return run


def ours_runner(folder: Path, in_force: InForce) -> Callable[[int], float]:
    scripts: dict[int, Path] = {}

    def run(steps: int) -> float:
        if steps not in scripts:
            scripts[steps] = write_script(steps, folder)
        elapsed, workspace = run_session(scripts[steps], steps, in_force)
        remove(workspace)
        return elapsed

    return run


def parse_steps(text: str) -> tuple[int, ...]:
    why = "step counts are positive integers, e.g. 50,200"
    return parse_counts(text, least=1, fewest=1, why=why)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="50 and 200 steps, 2 rounds")
    parser.add_argument("--steps", type=parse_steps, help="comma-separated step counts")
    parser.add_argument("--rounds", type=int, help="rounds up to 1,000 steps (default 5)")
    parser.add_argument("--long-rounds", type=int, default=1, help="rounds above 1,000 steps")
    parser.add_argument("--peer-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--peer-cli-max", type=int, help="skip mini as its CLI runs above N")
    parser.add_argument("--no-peer", action="store_true", help="ours and the floor only")
    args = parser.parse_args(argv)
    steps = args.steps or (QUICK_STEPS if args.quick else STEPS)
    rounds = args.rounds or (2 if args.quick else 5)
    if not Path(sys.executable).with_name("epistemic").exists():
        print("bench: no `epistemic` next to this python; run with the venv's", file=sys.stderr)
        return 2
    began, facts = time.perf_counter(), machine()
    in_force = InForce()
    with tempfile.TemporaryDirectory(prefix="bench-peer-") as name:
        folder = Path(name)
        runners: dict[str, Callable[[int], float]] = {OURS: ours_runner(folder, in_force)}
        if not args.no_peer:
            python = peer_python(args.peer_venv)
            driver = folder / "mini_driver.py"
            driver.write_text(DRIVER, encoding="utf-8")
            runners[COMMAND] = command_runner(python, folder)
            runners[CLI] = mini_runner(python, driver, folder, save=True)
            runners[LOOP] = mini_runner(python, driver, folder, save=False)
        walls: dict[tuple[str, int], list[float]] = {}
        floors: list[float] = []
        for run in runners.values():  # warm-up: bytecode caches, the peer's config folder
            run(0)
        for index in range(max(rounds, args.long_rounds)):
            for count in (0, *steps):
                if count and index >= (rounds if count <= 1000 else args.long_rounds):
                    continue
                names = list(runners)
                shift = (index + count) % len(names)
                for label in names[shift:] + names[:shift]:
                    saving = label in (CLI, COMMAND)  # each step rewrites the trajectory
                    if saving and args.peer_cli_max is not None and count > args.peer_cli_max:
                        continue
                    walls.setdefault((label, count), []).append(runners[label](count))
            floors.append(bash_floor(20))
    floor = statistics.median(floors)

    def per_step(label: str, count: int) -> float | None:
        """Median over rounds of (wall(N) - wall(0)) / N, paired within each round."""
        long = walls.get((label, count))
        if not long:
            return None
        return statistics.median(
            (w - z) / count for w, z in zip(long, walls[(label, 0)], strict=False)
        )  # long: rounds 1..k

    def ms(value: float | None, why: str = "not run") -> str:
        return f"{value * 1e3:.2f}" if value is not None else why

    def ratio(ours: float | None, theirs: float | None) -> str:
        return f"{ours / theirs:.2f}×" if ours is not None and theirs else "–"

    print(f"## `epistemic run` vs {PEER} {PEER_VERSION}: per-step cost, side by side\n")
    print(f"Ours ran with {in_force.describe()}.")
    skipped = f"skipped (> --peer-cli-max {args.peer_cli_max})"
    rows, targets = [], []
    for count in steps:
        ours, cli, loop = per_step(OURS, count), per_step(CLI, count), per_step(LOOP, count)
        command = per_step(COMMAND, count)
        done = len(walls[(OURS, count)])
        why = skipped if not args.no_peer else "not run"
        cells = [f"{count:,}", str(done), ms(ours), ms(command, why), ms(cli, why), ms(loop)]
        cells += [ratio(ours, command), ratio(ours, cli), ratio(ours, loop)]
        rows.append([*cells, f"{floor * 1e3:.2f}", ratio(ours, floor)])
        assert ours is not None
        peer, mode = (command, "its `mini` command")
        if peer is None:
            peer, mode = (cli, "agent loop, trajectory saved") if cli else (loop, "loop only")
        if peer is not None:
            target = f"ours ≤ {PEER_TARGET:g}× mini ({mode})"
            targets.append(
                [f"{count:,}", target, ratio(ours, peer), verdict(ours <= PEER_TARGET * peer)]
            )
        target = f"ours ≤ {FLOOR_TARGET:g}× bash -c true"
        targets.append(
            [f"{count:,}", target, ratio(ours, floor), verdict(ours <= FLOOR_TARGET * floor)]
        )
    header = ["steps", "rounds", "ours ms/step", f"{COMMAND} ms/step", f"{CLI} ms/step"]
    header += [f"{LOOP} ms/step", "ours/mini command", "ours/mini saved", "ours/mini loop"]
    header += ["bash -c true ms", "ours/bash"]
    print_table("Per-step cost, (wall(N) − wall(0)) / N, median over rounds", header, rows)
    print_table("Targets", ["steps", "target", "measured", "verdict"], targets, right=2)
    zero = [[label, f"{statistics.median(walls[(label, 0)]) * 1e3:.0f}"] for label in runners]
    print_table(
        "Wall of a 0-step session (start-up and one-time setup), ms", ["harness", "ms"], zero
    )
    print_table("Machine", ["what", "value"], [list(f) for f in facts], right=2)
    elapsed = time.perf_counter() - began
    print(f"\nTotal bench time {elapsed:.0f} s; load average at the end {load_average()}.")
    return 0  # the verdicts are in the tables


if __name__ == "__main__":
    sys.exit(main())
