#!/usr/bin/env python3
"""Which `race:` entry of a TSan suppression file matches each report in TSan log files.

    Tests/Sanitizers/check-tsan-suppressions.py Tests/Sanitizers/tsan.supp .build/sanitize/tsan-report.*

Used to check new entries against the reports of a run before the run is repeated: TSan
suppresses a race report when an entry's pattern (`*` a wildcard, otherwise a substring) matches
the function of any frame of either stack. Prints the reports no entry matches, then the count
per entry; exits 1 when a report is unmatched.
"""
import fnmatch
import re
import sys


def main() -> int:
    entries = [line.strip()[len("race:"):] for line in open(sys.argv[1]) if line.startswith("race:")]
    counts: dict[str, int] = {}
    unmatched = 0
    for path in sys.argv[2:]:
        text = open(path, errors="replace").read()
        for report in re.split(r"(?m)^WARNING: ThreadSanitizer", text)[1:]:
            report = report.split("SUMMARY:")[0]
            functions = re.findall(r"#\d+ (\S+)", report)
            entry = next(
                (e for e in entries if any(fnmatch.fnmatchcase(f, "*" + e + "*") for f in functions)), None)
            if entry is None:
                unmatched += 1
                print(f"unmatched, in {path}:{report[:800]}")
            else:
                counts[entry] = counts.get(entry, 0) + 1
    for entry, count in sorted(counts.items(), key=lambda item: -item[1]):
        print(f"{count:6} {entry}")
    print(f"{unmatched} unmatched")
    return 1 if unmatched else 0


if __name__ == "__main__":
    sys.exit(main())
