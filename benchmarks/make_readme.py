"""Write ``benchmarks/README.md``: every benchmark script, what it measures, the command that reproduces each
result, the result files and their headline figures, and the pages that cite them.

Read from each script's module docstring (its first paragraph says what it measures; the first command it
shows that runs the script is the command) and from ``benchmarks/results/`` (a result is the files of one
name with different extensions, or one folder; its command is the one its JSON records, else
``_readme_results.COMMANDS``, else the script's; its headline figures come from
``_readme_results.HEADLINES``). A result belongs to the script whose name its own name starts with
(``_readme_results.ALSO_WRITES``: two scripts write other names). A result is *cited* where a docs page, the
README or a script names it, literally or by a pattern (``name.{json,csv}``, ``name[_small].json``,
``name_*.json``, ``name_<tag>.json``); ``tests/docs/test_benchmarks_readme.py`` checks that every result
file is cited and that the committed README is the one this script writes.

Run: ``.venv/bin/python benchmarks/make_readme.py`` (writes ``benchmarks/README.md``; ``--check`` only
compares and exits 1 when it differs).
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import re
import sys
from pathlib import Path

from _readme_results import ALSO_WRITES, COMMANDS, HEADLINES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
README = HERE / "README.md"
IGNORED = ("checkpoints",)  # git-ignored working folders of running benchmarks
FIGURE = "_p_in_histograms"  # a second figure of a result, listed with it


def docstring(script: Path) -> str:
    return ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""


def what_it_measures(doc: str) -> str:
    """The docstring's first paragraph, on one line."""
    return " ".join(doc.split("\n\n")[0].split())


def documented_command(script: Path, doc: str) -> str:
    """The first command in the docstring that runs ``script`` (inline code or an indented line)."""
    name = re.escape(f"benchmarks/{script.name}")
    inline = next((m for m in re.finditer(r"``(.+?)``", doc, re.S) if re.search(name, m.group(1))), None)
    block = re.search(rf"^ {{4}}(\S[^\n]*{name}[^\n]*)$", doc, re.M)
    found = [m for m in (inline, block) if m]
    if not found:
        raise ValueError(f"{script.name}: its docstring shows no command that runs it; add a 'Run: ``...``'.")
    command = min(found, key=lambda m: m.start()).group(1)
    return " ".join(command.split("#")[0].split("->")[0].split())


def result_groups(results: Path = RESULTS) -> dict[str, list[str]]:
    """Result name -> its files (relative to ``results``): one name's extensions, or a folder's files."""
    groups: dict[str, list[str]] = {}
    for path in sorted(results.iterdir()):
        if path.name.startswith(".") or path.name in IGNORED or path.name.endswith(".partial.json"):
            continue
        if path.is_dir():
            files = sorted(p.relative_to(results).as_posix() for p in path.rglob("*") if p.is_file())
            groups[f"{path.name}/"] = files
        else:
            stem = path.name.split(".", 1)[0].removesuffix(FIGURE)
            groups.setdefault(stem, []).append(path.name)
    return groups


def owner(name: str, scripts: list[str]) -> str | None:
    """The script that writes result ``name``: the longest script name it starts with."""
    stem = name.rstrip("/")
    for prefix, script in ALSO_WRITES.items():
        if stem == prefix or stem.startswith(prefix + "_"):
            return script
    fits = [s for s in scripts if stem == s or stem.startswith(s + "_")]
    return max(fits, key=len) if fits else None


TOKEN = re.compile(r"[\w.*{}\[\]<>,/-]+")


def _expand(pattern: str) -> list[str]:
    """``a{b,c}`` -> ``ab``, ``ac``; ``a[b]`` -> ``a``, ``ab``; ``<tag>`` -> ``*``."""
    pattern = re.sub(r"<[^<>]*>", "*", pattern)
    m = re.search(r"\{([^{}]*)\}|\[([^\[\]]*)\]", pattern)
    if not m:
        return [pattern]
    options = m.group(1).split(",") if m.group(1) is not None else ["", m.group(2)]
    head, tail = pattern[: m.start()], pattern[m.end() :]
    return [x for o in options for x in _expand(head + o + tail)]


def citation_patterns(text: str) -> set[str]:
    """Every name or pattern of a results file that ``text`` mentions (``benchmarks/results/`` stripped)."""
    out = set()
    for token in TOKEN.findall(text):
        token = token.rstrip(".,;:")
        token = token.strip("*") if "**" in token else token  # Markdown bold, not a pattern
        for prefix in ("benchmarks/results/", "results/"):
            if prefix in token:
                token = token.split(prefix, 1)[1]
        for pattern in _expand(token):
            literal = re.split(r"[*?\[]", pattern)[0]
            if len(literal) >= 4 and literal[0].isalnum() and ("_" in literal or "." in pattern):
                out.add(pattern)
    return out


def citing_texts() -> dict[str, str]:
    """Where a result may be cited: the docs pages, the README and the benchmark scripts (not this one nor the
    table of :mod:`_readme_results`, which name every result)."""
    paths = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    paths += [p for p in sorted(HERE.glob("*.py")) if p.name not in ("make_readme.py", "_readme_results.py")]
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in paths}


def cited_by(file: str, patterns: dict[str, set[str]]) -> list[str]:
    """The texts whose patterns match ``file`` (a path in results/) or a folder it lies in."""
    parts = file.split("/")
    candidates = [file] + ["/".join(parts[:i]) + "/" for i in range(1, len(parts))]
    return [
        where
        for where, pats in patterns.items()
        if any(fnmatch.fnmatchcase(c, p) for c in candidates for p in pats)
    ]


def uncited(results: Path = RESULTS) -> list[str]:
    """The files under ``results`` that no docs page, README or script names (literally or by a pattern)."""
    patterns = {where: citation_patterns(text) for where, text in citing_texts().items()}
    return [f for files in result_groups(results).values() for f in files if not cited_by(f, patterns)]


def headline(name: str, files: list[str], results: Path = RESULTS) -> str:
    """The headline figures of a result, from its JSON (the most specific :data:`HEADLINES` entry)."""
    json_file = next((f for f in files if f.endswith(".json") and "/" not in f), None)
    if name.endswith("/"):
        json_file = f"{name}results.json" if f"{name}results.json" in files else None
    if json_file is None:
        return ""
    keys = [k for k in HEADLINES if name == k or name.startswith(k.rstrip("/") + "_")]
    if not keys:
        return ""
    data = json.loads((results / json_file).read_text(encoding="utf-8"))
    return HEADLINES[max(keys, key=len)](data)


def recorded_command(name: str, files: list[str], results: Path = RESULTS) -> str | None:
    if name in COMMANDS:
        return COMMANDS[name]
    json_file = f"{name}results.json" if name.endswith("/") else f"{name}.json"
    if json_file not in files:
        return None
    data = json.loads((results / json_file).read_text(encoding="utf-8"))
    command = data.get("command") or (data.get("meta") or {}).get("command")
    if command and command.split()[0].startswith("benchmarks/") and command.split()[0].endswith(".py"):
        command = ".venv/bin/python " + command
    return command


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _files(name: str, files: list[str]) -> str:
    if name.endswith("/"):
        return f"`{name}` ({', '.join(f.split('/', 1)[1] for f in files)})"
    return ", ".join(f"`{f}`" for f in files)


def render(results: Path = RESULTS) -> str:
    scripts = sorted(
        p for p in HERE.glob("*.py") if not p.name.startswith("_") and p.name != Path(__file__).name
    )
    groups = result_groups(results)
    patterns = {where: citation_patterns(text) for where, text in citing_texts().items()}
    by_script: dict[str | None, list[str]] = {}
    for name in groups:
        by_script.setdefault(owner(name, [s.stem for s in scripts]), []).append(name)
    lines = [
        "# Benchmarks",
        "",
        "Written by `benchmarks/make_readme.py` from each script's docstring and from `benchmarks/results/`;",
        "`tests/docs/test_benchmarks_readme.py` fails when this file is not what the script writes, or when",
        "a result file is cited nowhere. Rerun: `.venv/bin/python benchmarks/make_readme.py`. The docs pages",
        "in the last column discuss the figures (docs/benchmarks.md lists the scripts by topic).",
        "",
        "Result names: `<script>[_small][_<tag>]`. `_small`: the script's `--quick` size, a smoke test whose",
        "figures are indicative only; `_<tag>`: a run with `--tag` (another machine, another load, or a",
        "rerun of a cell: `_rerun_`); `_p_in_histograms.png`: each setting's histogram of the attacker's",
        "`P_IN`.",
        "Peers run from their own environments under `benchmarks/envs/` (see each script's docstring); real",
        "data are read from `../shared/data` (`MIPKIT_SHARED_DATA`).",
        "",
        "| script | what it measures | command | result | headline figures | cited in |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for script in [*scripts, None]:
        names = by_script.get(script.stem if script else None, [])
        if script is None and not names:
            continue
        doc = docstring(script) if script else ""
        first = [
            f"`{script.name}`" if script else "(no script here)",
            _cell(what_it_measures(doc)) if script else "",
        ]
        command = documented_command(script, doc) if script else ""
        if not names:
            lines.append(f"| {' | '.join(first)} | `{command}` | - | - | - |")
        for i, name in enumerate(names):
            files = groups[name]
            cmd = recorded_command(name, files, results) or command
            cites = sorted({w for f in files for w in cited_by(f, patterns)})
            cells = [
                *(first if i == 0 else ["", ""]),
                f"`{_cell(cmd)}`" if cmd else "-",
                _files(name, files),
                _cell(headline(name, files, results)) or "-",
                ", ".join(cites) or "**nowhere**",
            ]
            lines.append(f"| {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed README, write nothing")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        same = README.is_file() and README.read_text(encoding="utf-8") == text
        print(
            "benchmarks/README.md is up to date"
            if same
            else "benchmarks/README.md differs: rerun make_readme.py"
        )
        return 0 if same else 1
    README.write_text(text, encoding="utf-8")
    print(f"wrote {README.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
