#!/usr/bin/env python3
"""Checks the documentation's links: every relative link in README.md, protocol.md,
BENCHMARKS.md and docs/*.md names a file of the repository, and every anchor (`file.md#part`
or `#part`) names a heading of that file, made into an anchor as GitHub makes it. Links in code
(fenced blocks and `inline code`) and absolute URLs are left alone. Exits 1 and lists the broken
links, else prints one line."""

import re
import sys
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def strip_code(text):
    """The text with fenced code blocks and inline code blanked, line numbers kept."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else re.sub(r"`[^`]*`", "", line))
    return lines


def anchors(path, cache={}):
    """The anchors GitHub makes for a Markdown file's headings."""
    if path not in cache:
        seen, result = {}, set()
        for line in strip_code(path.read_text(encoding="utf-8")):
            match = HEADING.match(line)
            if not match:
                continue
            title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2))  # links keep their text
            slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            result.add(slug if count == 0 else f"{slug}-{count}")
        # Inline code in a heading still counts: read the headings again without blanking it.
        for line in path.read_text(encoding="utf-8").split("\n"):
            match = HEADING.match(line)
            if match:
                title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2))
                result.add(re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-"))
        cache[path] = result
    return cache[path]


def main():
    files = [ROOT / "README.md", ROOT / "protocol.md", ROOT / "BENCHMARKS.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    broken, count = [], 0
    for source in files:
        if not source.exists():
            broken.append(f"{source.relative_to(ROOT)}: missing")
            continue
        for number, line in enumerate(strip_code(source.read_text(encoding="utf-8")), 1):
            for match in LINK.finditer(line):
                target = match.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                    continue
                count += 1
                where = f"{source.relative_to(ROOT)}:{number}: {target}"
                file_part, _, anchor = target.partition("#")
                path = (source.parent / unquote(file_part)).resolve() if file_part else source
                if not path.exists():
                    broken.append(f"{where}: no such file")
                elif anchor and path.suffix == ".md" and unquote(anchor).lower() not in anchors(path):
                    broken.append(f"{where}: no heading makes #{anchor}")
                elif ROOT not in path.parents and path != ROOT:
                    broken.append(f"{where}: outside the repository")
    if broken:
        print("check-links: broken links:", *broken, sep="\n  ", file=sys.stderr)
        return 1
    print(f"check-links: {count} relative links in {len(files)} files resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
