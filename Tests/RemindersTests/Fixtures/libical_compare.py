#!/usr/bin/env python3
"""Weighs libical against the corpus: runs libical_expand on every case of
rrule-corpus.json and counts the cases libical gets exactly right, twice: libical as it
is, and libical behind the thin wrapper a caller would write for the RFC 5545 rules it
does not follow (DTSTART first and counted, a DATE UNTIL covering its whole day), so
that what is left is libical's own expansion.

    cc -O2 libical_expand.c -o /tmp/libical_expand $(pkg-config --cflags --libs libical)
    python3 libical_compare.py /tmp/libical_expand

Each case runs in its own process with a time limit, as libical may search a long time
for a rule that can never match again. Prints the totals, the differences grouped by
kind, and a few examples of each.
"""
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def compact(local):
    """2027-03-01T09:00 -> 20270301T090000"""
    return local.replace("-", "").replace(":", "") + "00"


def kinds(case, got):
    """What makes a case special, to group the differences."""
    rule = case["rrule"]
    expected = case["occurrences"]
    found = []
    if got and got[0].startswith("ERROR"):
        found.append("refused: " + got[0])
        return found
    if got == ["TIMEOUT"]:
        return ["timeout (no answer in 5 s)"]
    if len(got) != len(set(got)):
        found.append("repeats an occurrence")
    if "SKIP=" in rule and "SKIP=OMIT" not in rule:
        found.append("SKIP=BACKWARD/FORWARD")
    if expected and (not got or got[0] != expected[0]):
        found.append("DTSTART not returned first")
    elif expected and got and got[0] == expected[0] and got[1:2] != expected[1:2] and "COUNT=" in rule:
        found.append("COUNT")
    if "BYSETPOS" in rule:
        found.append("BYSETPOS")
    if "UNTIL=" in rule:
        until = rule.split("UNTIL=")[1].split(";")[0]
        found.append("UNTIL " + ("UTC" if until.endswith("Z") else "DATE" if len(until) == 8 else "local"))
    if case.get("exdates"):
        found.append("EXDATE")
    if "WKST" in rule:
        found.append("WKST")
    if len(got) < len(expected) and got == expected[: len(got)]:
        found.append("stops early")
    if len(got) > len(expected) and got[: len(expected)] == expected:
        found.append("goes on too long")
    return found or ["other"]


def run_libical(binary, start, rule, exdates, limit):
    """libical's occurrences, a one-element ["ERROR ..."] or ["TIMEOUT"]."""
    try:
        run = subprocess.run([binary, compact(start), rule, exdates, str(limit)], capture_output=True, text=True, timeout=5)
    except subprocess.TimeoutExpired:
        return ["TIMEOUT"]
    line = run.stdout.strip()
    return [line] if line.startswith("ERROR") else (line.split(",") if line else [])


def libical_as_is(binary, case, limit):
    exdates = ",".join(compact(value) for value in case.get("exdates", []))
    return run_libical(binary, case["start"], case["rrule"], exdates, limit)


def libical_with_rfc_wrapper(binary, case, limit):
    """libical behind the thin wrapper a caller would need for RFC 5545's rules that
    libical does not follow: COUNT removed from the rule and applied here to a list that
    starts with DTSTART (libical leaves out a DTSTART that does not match the rule); a DATE
    UNTIL written as that day's 23:59:59 (libical reads it as midnight); exceptions
    removed after COUNT."""
    parts = [part for part in case["rrule"].split(";")]
    count = None
    rule = []
    for part in parts:
        name, value = part.split("=", 1)
        if name == "COUNT":
            count = int(value)
            continue
        if name == "UNTIL" and len(value) == 8:
            value += "T235959"
        rule.append(f"{name}={value}")
    exdates = case.get("exdates", [])
    wanted = count if count is not None else limit + len(exdates)
    got = run_libical(binary, case["start"], ";".join(rule), "", wanted + 1)
    if got and (got[0].startswith("ERROR") or got == ["TIMEOUT"]):
        return got
    occurrences = [case["start"]] + [value for value in got if value != case["start"]]
    if count is not None:
        occurrences = occurrences[:count]
    return [value for value in occurrences if value not in exdates][:limit]


def measure(title, cases, limit, expand):
    right = 0
    by_kind = collections.Counter()
    by_source = collections.Counter()
    examples = collections.defaultdict(list)
    for case in cases:
        got = expand(case, limit)
        if got == case["occurrences"]:
            right += 1
            continue
        by_source[case["source"]] += 1
        for kind in kinds(case, got):
            by_kind[kind] += 1
            if len(examples[kind]) < 3:
                examples[kind].append(f'{case["start"]} {case["rrule"]}: got {got[:4]} expected {case["occurrences"][:4]}')
    print(f"{title}: {right} of {len(cases)} corpus cases exactly right, {len(cases) - right} differ")
    print("  differing cases by source:", dict(by_source))
    print("  differences by kind (a case can have several):")
    for kind, number in by_kind.most_common():
        print(f"    {number:4d}  {kind}")
        for example in examples[kind]:
            print(f"            {example}")
    return right


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "/tmp/libical_expand"
    with open(os.path.join(HERE, "rrule-corpus.json")) as source:
        corpus = json.load(source)
    version = os.popen("pkg-config --modversion libical").read().strip()
    print(f"libical {version}, corpus of {len(corpus['cases'])} cases ({corpus['oracle']})")
    measure("libical as it is", corpus["cases"], corpus["limit"], lambda case, limit: libical_as_is(binary, case, limit))
    measure("libical behind an RFC 5545 wrapper", corpus["cases"], corpus["limit"],
            lambda case, limit: libical_with_rfc_wrapper(binary, case, limit))


if __name__ == "__main__":
    main()
