"""What every bench shares to report: where results go, the tables of p50/p99 against a baseline,
and the tools a bench needs installed (apt through scripts/services.sh, the one rule for apt)."""

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
SERVICES_SH = str(ROOT / "scripts" / "services.sh")


def ensure_tool(binary: str, package: str) -> bool:
    """Whether ``binary`` is on PATH, after installing ``package`` with apt when it is missing and
    this runs as root. The install is scripts/services.sh's apt_install, the one rule for apt here:
    the lists fetched once a run (UGC_APT_UPDATED), the dpkg lock waited for."""
    if shutil.which(binary):
        return True
    installed = subprocess.run(
        ["bash", "-c", 'source "$0" && can_apt && apt_install "$1" "$1"', SERVICES_SH, package], check=False
    )
    if installed.returncode == 0:
        os.environ["UGC_APT_UPDATED"] = "1"  # the next tool of this run needs no second update
    if not shutil.which(binary):
        print(f"warning: {binary} not found (install {package}); its figures are skipped")
        return False
    return True


def measured(path: Path, heading: list[str], rows: list[tuple[str, str]]) -> None:
    """Write and print a results file: ``heading`` (its title first), then a "what | measured"
    table of ``rows``."""
    text = "\n".join([*heading, "", "| what | measured |", "|---|---|", *[f"| {w} | {v} |" for w, v in rows], ""])
    path.write_text(text)
    print(text)


def fmt(value, digits=2):
    return "—" if value is None else f"{value:,.{digits}f}"


class Table:
    def __init__(self):
        self.rows = []

    def add(self, what, size, site, baseline=None, note=""):
        ratio = None
        if baseline and site and site.get("p99"):
            ratio = baseline["p99"] / site["p99"]
        self.rows.append({"what": what, "size": size, "site": site, "baseline": baseline, "ratio": ratio, "note": note})
        print(
            f"  {what:<46} {size:>10} site p50 {fmt(site and site.get('p50'))} p99 {fmt(site and site.get('p99'))} ms"
            + (
                f" | baseline p50 {fmt(baseline['p50'])} p99 {fmt(baseline['p99'])} ms | {fmt(ratio, 1)}x"
                if baseline
                else ""
            )
            + (f"  {note}" if note else ""),
            flush=True,
        )

    def markdown(self) -> str:
        lines = [
            "| measure | boards | site p50 | site p99 | baseline p50 | baseline p99 | baseline/site (p99) | note |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for r in self.rows:
            s, b = r["site"] or {}, r["baseline"] or {}
            lines.append(
                f"| {r['what']} | {r['size']} | {fmt(s.get('p50'))} | {fmt(s.get('p99'))} | "
                f"{fmt(b.get('p50'))} | {fmt(b.get('p99'))} | {fmt(r['ratio'], 1) + 'x' if r['ratio'] else '—'} | {r['note']} |"
            )
        return "\n".join(lines)
