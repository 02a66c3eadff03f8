"""Install weight of each extra, measured in fresh virtual environments.

Run: ``python -m benchmarks.install_size`` (writes ``benchmarks/RESULTS-install.md``).
Not part of CI: each row is a real ``pip install`` from the package index into a
new ``python -m venv`` (a few minutes in all; pip's cache makes reruns faster).

Per row: the packages installed (``pip list`` less pip, setuptools and wheel,
the project itself included) and the size of ``site-packages`` (``du -sk``: the
disk it takes, what ``du -sh`` shows), the same way for every row. ``--rows`` picks rows by name;
``--keep`` leaves the venvs in ``--work`` for inspection; ``--before REF`` adds a
row for a plain install of an older commit (``git archive REF``), e.g. the last
one whose core dependencies still included chromadb, langchain-openai and psycopg.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).with_name("RESULTS-install.md")
TOOLING = {"pip", "setuptools", "wheel"}

# (row name, pip arguments, what it is for); "{root}" is this checkout.
ROWS: list[tuple[str, list[str], str]] = [
    ("core", ["{root}"], "the checkpointer: SqliteSaver, AsyncSqliteSaver, the nodes"),
    ("postgres", ["{root}[postgres]"], "+ PostgresSaver, AsyncPostgresSaver, the Postgres queue"),
    ("longterm", ["{root}[longterm]"], "+ ChromaMemoryStore, the embeddings"),
    ("openai", ["{root}[openai]"], "+ ChatOpenAI for the demo and the example agents"),
    ("all", ["{root}[all]"], "the three layers on both backends, and OpenAI"),
    (
        "official sqlite",
        ["langgraph", "langgraph-checkpoint-sqlite"],
        "reference: LangGraph with its official SQLite saver",
    ),
]


@dataclass(frozen=True)
class Row:
    name: str
    spec: str
    purpose: str
    packages: int
    bytes: int
    seconds: float


def _site_packages(venv: Path) -> Path:
    out = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def _du_bytes(path: Path) -> int:
    # Disk usage, as `du -sh` shows it (apparent sizes are ~4% smaller).
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) * 1024


def measure(name: str, args: list[str], purpose: str, work: Path, *, keep: bool) -> Row:
    venv = work / name.replace(" ", "-")
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    specs = [a.format(root=ROOT) for a in args]
    start = time.perf_counter()
    subprocess.run([*pip, "install", "-q", "--disable-pip-version-check", *specs], check=True)
    seconds = time.perf_counter() - start
    listed = subprocess.run(
        [*pip, "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    )
    packages = [p for p in json.loads(listed.stdout) if p["name"].lower() not in TOOLING]
    size = _du_bytes(_site_packages(venv))
    if not keep:
        shutil.rmtree(venv, ignore_errors=True)
    spec = " ".join(a.replace("{root}", ".") for a in args)
    return Row(name, spec, purpose, len(packages), size, seconds)


def report(rows: list[Row]) -> str:
    lines = [
        "# Install weight per extra",
        "",
        "`python -m benchmarks.install_size`: each row is `pip install <spec>` into a fresh",
        f"`python -m venv` (Python {sys.version.split()[0]}, Linux x86-64); packages exclude pip,",
        "setuptools and wheel and include langgraph-memory itself; size is the disk usage of",
        "site-packages (`du -sk`, as `du -sh` shows it). Install time depends on pip's cache",
        "and the network (these ran with a warm cache), so read it as a rough cost only.",
        "",
        "| install | `pip install` | packages | site-packages | install time | for |",
        "|---|---|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | `{r.spec}` | {r.packages} | {r.bytes / 2**20:.0f} MB | "
            f"{r.seconds:.0f} s | {r.purpose} |"
        )
    lines += [
        "",
        "`all` installs psycopg's binary wheel (`psycopg[binary]`, ~11 MB), which the plain",
        "install before the split did not: it needed the machine's libpq instead.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="*", default=[r[0] for r in ROWS])
    parser.add_argument("--work", type=Path, default=Path("/tmp/lgm-install-size"))
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--before", help="a git ref: add a row for its plain install")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    if args.before:
        src = args.work / "before-src"
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.before], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", args.before],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        row = measure(
            f"before ({commit})",
            [str(src)],
            "plain install before the split",
            args.work,
            keep=args.keep,
        )
        rows.append(Row(row.name, ".", row.purpose, row.packages, row.bytes, row.seconds))
        print(rows[-1], flush=True)
    for name, pip_args, purpose in ROWS:
        if name in args.rows:
            rows.append(measure(name, pip_args, purpose, args.work, keep=args.keep))
            print(rows[-1], flush=True)
    text = report(rows)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
