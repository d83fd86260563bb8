#!/usr/bin/env python3
"""Builds rrule-corpus.json, the oracle RecurrenceCorpusTests checks the Swift expansion against.

    python3 make_rrule_corpus.py            # writes rrule-corpus.json next to this script

Each case is {name, source, start, rrule, exdates?, occurrences}: a naive local start
("YYYY-MM-DDTHH:MM"), RRULE text, optional exception date-times, and the first (at most
LIMIT) occurrences as naive local times. The Swift test expands them in UTC, so a UTC
UNTIL ("...Z") means the same wall-clock moment here.

Where the expected occurrences come from:
- python-dateutil's rrule (the oracle), for every rule without SKIP.
- RFC 5545 vs dateutil on DTSTART: dateutil leaves out a DTSTART that does not match
  the rule, and counts COUNT over matching dates only, while RFC 5545 3.8.5.3 says "The
  DTSTART property value always counts as the first occurrence". So the expected list
  is built the RFC way: the start first, then dateutil's occurrences other than the
  start (computed without COUNT), COUNT applied to that combined list, then EXDATE
  removed (after COUNT, as RFC 5545's recurrence set does), then cut to LIMIT.
- UNTIL: dateutil gets the UNTIL as a naive datetime; a DATE until is given as that
  day's 23:59:59 (RFC 5545: a DATE UNTIL includes the whole day; dateutil would read it
  as midnight).
- SKIP (RFC 7529): dateutil has no SKIP. Those cases use only FREQ=MONTHLY/YEARLY with
  INTERVAL, BYMONTH, BYMONTHDAY, BYSETPOS, COUNT and UNTIL, and are expanded by the small
  period-by-period expansion below (skip_dates). That expansion is first checked
  against dateutil on the same rule with SKIP=OMIT (it must agree on the first 60
  occurrences) before its SKIP result is used.
- BYSETPOS in a rule's first week: dateutil counts positions only among the days from
  DTSTART on (its first WEEKLY period is cut at DTSTART; MONTHLY and YEARLY periods are
  not), RFC 5545 among the whole week's. See whole_first_week.
- Mixed BYDAY lists (plain weekdays together with ordinals, "MO,1FR") are not
  generated: dateutil 2.9 intersects the two kinds instead of joining them as RFC 5545
  says (it returns nothing for FREQ=MONTHLY;BYDAY=MO,1FR). The Swift tests cover that
  case by hand.

The random part uses a fixed seed, so running the script again gives the same file.
"""
import datetime as dt
import itertools
import json
import os
import random
import sys

import dateutil
from dateutil.rrule import rrulestr

LIMIT = 50
SEED = 5545
RANDOM_CASES = 330
RANDOM_SKIP_CASES = 40
WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
HERE = os.path.dirname(os.path.abspath(__file__))


# ----------------------------------------------------------------------------- text

def fmt(moment):
    return moment.strftime("%Y-%m-%dT%H:%M")


def parse_start(text):
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M")


def parse_compact(text):
    """DTSTART/EXDATE style 19970902T090000 -> datetime."""
    return dt.datetime.strptime(text, "%Y%m%dT%H%M%S")


def rule_parts(rule):
    parts = {}
    for piece in rule.split(";"):
        name, value = piece.split("=", 1)
        parts[name.upper()] = value.upper()
    return parts


def join_parts(parts):
    return ";".join(f"{name}={value}" for name, value in parts.items())


def ints(text):
    return [int(value) for value in text.split(",")] if text else []


def until_moment(value):
    """The last naive local moment an UNTIL value includes (the corpus zone is UTC)."""
    if len(value) == 8:
        day = dt.datetime.strptime(value, "%Y%m%d")
        return day.replace(hour=23, minute=59, second=59)
    return dt.datetime.strptime(value.rstrip("Z"), "%Y%m%dT%H%M%S")


# ------------------------------------------------------------------------ expansion

def dateutil_dates(start, parts, until):
    """dateutil's occurrences of the rule without COUNT/UNTIL/SKIP, up to `until`."""
    if parts["FREQ"] == "WEEKLY" and "BYSETPOS" in parts:
        return whole_first_week(start, parts, until)
    rule = rrulestr(join_parts(parts), dtstart=start)
    if until is not None:
        rule = rule.replace(until=until)
    return iter(rule)


def whole_first_week(start, parts, until):
    """dateutil's first WEEKLY period holds only the days from DTSTART to the end of the
    week, so its BYSETPOS positions in that week are counted among those days, while for
    MONTHLY and YEARLY it counts among the whole month or year. RFC 5545 (and the Swift
    code) count positions in the whole period, so dateutil is given a DTSTART moved back
    to the week's first day (WKST) and the BYDAY the real start implies, and what comes
    before the real start is dropped."""
    week_start = WEEKDAYS.index(parts.get("WKST", "MO"))
    back = (start.weekday() - week_start) % 7
    moved = dict(parts)
    moved.setdefault("BYDAY", WEEKDAYS[start.weekday()])
    rule = rrulestr(join_parts(moved), dtstart=start - dt.timedelta(days=back))
    if until is not None:
        rule = rule.replace(until=until)
    return (moment for moment in rule if moment >= start)


def month_day(year, month, value, skip):
    """Day `value` of a month with RFC 7529 SKIP for days past the month's end."""
    length = (dt.date(year + month // 12, month % 12 + 1, 1) - dt.date(year, month, 1)).days
    if value < 0:
        day = length + 1 + value
        return dt.date(year, month, day) if day >= 1 else None
    if value <= length:
        return dt.date(year, month, value)
    if skip == "BACKWARD":
        return dt.date(year, month, length)
    if skip == "FORWARD":
        return dt.date(year, month, length) + dt.timedelta(days=1)
    return None


def skip_dates(start, parts, skip, until):
    """Period-by-period expansion of MONTHLY/YEARLY rules made of INTERVAL, BYMONTH,
    BYMONTHDAY and BYSETPOS, with SKIP applied to days a month does not have."""
    assert parts["FREQ"] in ("MONTHLY", "YEARLY") and "BYDAY" not in parts
    interval = int(parts.get("INTERVAL", "1"))
    by_month = ints(parts.get("BYMONTH"))
    by_month_day = ints(parts.get("BYMONTHDAY")) or [start.day]
    by_set_pos = ints(parts.get("BYSETPOS"))
    latest = start
    for period in itertools.count():
        if parts["FREQ"] == "MONTHLY":
            index = start.year * 12 + start.month - 1 + period * interval
            year, month = divmod(index, 12)
            months = [(year, month + 1)] if not by_month or month + 1 in by_month else []
        else:
            year = start.year + period * interval
            chosen = by_month or ([start.month] if "BYMONTHDAY" not in parts else list(range(1, 13)))
            months = [(year, month) for month in chosen]
        if year > 9999:
            return
        days = sorted({day for (y, m) in months for value in by_month_day
                       for day in [month_day(y, m, value, skip)] if day is not None})
        if by_set_pos:
            picked = {p - 1 if p > 0 else len(days) + p for p in by_set_pos}
            days = [days[i] for i in sorted(picked) if 0 <= i < len(days)]
        for day in days:
            moment = dt.datetime.combine(day, start.time())
            if moment <= latest:
                continue
            if until is not None and moment > until:
                return
            latest = moment
            yield moment


def expected_occurrences(start, rule, exdates):
    parts = rule_parts(rule)
    count = int(parts.pop("COUNT")) if "COUNT" in parts else None
    until = until_moment(parts.pop("UNTIL")) if "UNTIL" in parts else None
    skip = parts.pop("SKIP", "OMIT")
    if skip == "OMIT":
        source = dateutil_dates(start, parts, until)
    else:
        check_skip_expansion(start, parts, until)
        source = skip_dates(start, parts, skip, until)
    wanted = count if count is not None else LIMIT + len(exdates)
    occurrences = [start]  # RFC 5545: DTSTART always counts as the first occurrence
    for moment in source:
        if len(occurrences) >= wanted:
            break
        if moment != start:
            occurrences.append(moment)
    if count is not None:
        occurrences = occurrences[:count]
    excluded = set(exdates)
    return [moment for moment in occurrences if moment not in excluded][:LIMIT]


def check_skip_expansion(start, parts, until):
    """skip_dates with SKIP=OMIT must agree with dateutil before its SKIP result is used."""
    ours = list(itertools.islice(skip_dates(start, parts, "OMIT", until), 60))
    theirs = [m for m in itertools.islice(dateutil_dates(start, parts, until), 61) if m != start][:60]
    if ours != theirs:
        sys.exit(f"skip_dates disagrees with dateutil for {join_parts(parts)} from {start}:\n{ours[:5]}\n{theirs[:5]}")


# ------------------------------------------------------------- hand-written cases

# RFC 5545 section 3.8.5.3 examples the subset supports (BYYEARDAY, BYWEEKNO and the
# HOURLY/MINUTELY examples are left out). Starts are the RFC's DTSTART as local times.
RFC5545 = [
    ("daily for 10 occurrences", "19970902T090000", "FREQ=DAILY;COUNT=10"),
    ("daily until December 24, 1997", "19970902T090000", "FREQ=DAILY;UNTIL=19971224T000000Z"),
    ("every other day, forever", "19970902T090000", "FREQ=DAILY;INTERVAL=2"),
    ("every 10 days, 5 occurrences", "19970902T090000", "FREQ=DAILY;INTERVAL=10;COUNT=5"),
    ("every day in January for 3 years (yearly)", "19980101T090000",
     "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA"),
    ("every day in January for 3 years (daily)", "19980101T090000", "FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1"),
    ("weekly for 10 occurrences", "19970902T090000", "FREQ=WEEKLY;COUNT=10"),
    ("weekly until December 24, 1997", "19970902T090000", "FREQ=WEEKLY;UNTIL=19971224T000000Z"),
    ("every other week, forever", "19970902T090000", "FREQ=WEEKLY;INTERVAL=2;WKST=SU"),
    ("weekly on Tuesday and Thursday for five weeks (until)", "19970902T090000",
     "FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH"),
    ("weekly on Tuesday and Thursday for five weeks (count)", "19970902T090000", "FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH"),
    ("every other week on Monday, Wednesday and Friday until December 24, 1997", "19970901T090000",
     "FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR"),
    ("every other week on Tuesday and Thursday, 8 occurrences", "19970902T090000",
     "FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH"),
    ("monthly on the first Friday for 10 occurrences", "19970905T090000", "FREQ=MONTHLY;COUNT=10;BYDAY=1FR"),
    ("monthly on the first Friday until December 24, 1997", "19970905T090000", "FREQ=MONTHLY;UNTIL=19971224T000000Z;BYDAY=1FR"),
    ("every other month on the first and last Sunday, 10 occurrences", "19970907T090000",
     "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU"),
    ("monthly on the second-to-last Monday for 6 months", "19970922T090000", "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO"),
    ("monthly on the third-to-the-last day, forever", "19970928T090000", "FREQ=MONTHLY;BYMONTHDAY=-3"),
    ("monthly on the 2nd and 15th for 10 occurrences", "19970902T090000", "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15"),
    ("monthly on the first and last day for 10 occurrences", "19970930T090000", "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1"),
    ("every 18 months on the 10th to 15th, 10 occurrences", "19970910T090000",
     "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15"),
    ("every Tuesday, every other month", "19970902T090000", "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU"),
    ("yearly in June and July for 10 occurrences", "19970610T090000", "FREQ=YEARLY;COUNT=10;BYMONTH=6,7"),
    ("every other year on January, February and March for 10 occurrences", "19970310T090000",
     "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3"),
    ("every 20th Monday of the year, forever", "19970519T090000", "FREQ=YEARLY;BYDAY=20MO"),
    ("every Thursday in March, forever", "19970313T090000", "FREQ=YEARLY;BYMONTH=3;BYDAY=TH"),
    ("every Thursday, but only during June, July and August", "19970605T090000", "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8"),
    ("every Friday the 13th, forever (DTSTART excluded by EXDATE)", "19970902T090000",
     "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", ["19970902T090000"]),
    ("the first Saturday that follows the first Sunday of the month", "19970913T090000",
     "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13"),
    ("US Presidential Election day", "19961105T090000", "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8"),
    ("the third instance of Tuesday, Wednesday or Thursday, for the next 3 months", "19970904T090000",
     "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3"),
    ("the second-to-last weekday of the month", "19970929T090000", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2"),
    ("WKST=MO: every other week on Tuesday and Sunday, 4 occurrences", "19970805T090000",
     "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO"),
    ("WKST=SU: every other week on Tuesday and Sunday, 4 occurrences", "19970805T090000",
     "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU"),
    ("an invalid date (February 30) is ignored", "20070115T090000", "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5"),
]

# RFC 7529 section 4 examples (Gregorian, without RSCALE) and other SKIP cases.
SKIP_CASES = [
    ("RFC 7529: monthly from January 31, SKIP=OMIT", "20150131T090000", "FREQ=MONTHLY;COUNT=4;SKIP=OMIT"),
    ("RFC 7529: monthly from January 31, SKIP=BACKWARD", "20150131T090000", "FREQ=MONTHLY;COUNT=4;SKIP=BACKWARD"),
    ("RFC 7529: monthly from January 31, SKIP=FORWARD", "20150131T090000", "FREQ=MONTHLY;COUNT=4;SKIP=FORWARD"),
    ("RFC 7529: yearly from February 29, SKIP=FORWARD", "20120229T090000", "FREQ=YEARLY;SKIP=FORWARD;COUNT=5"),
    ("RFC 7529: yearly from February 29, SKIP=BACKWARD", "20120229T090000", "FREQ=YEARLY;SKIP=BACKWARD;COUNT=5"),
    ("monthly on the 31st from January 31, 2027, SKIP=BACKWARD", "20270131T090000", "FREQ=MONTHLY;SKIP=BACKWARD"),
    ("monthly on the 30th and 31st, SKIP=BACKWARD counts February 28 once", "20270130T090000",
     "FREQ=MONTHLY;BYMONTHDAY=30,31;SKIP=BACKWARD;COUNT=12"),
    ("monthly on the 1st and 31st, SKIP=FORWARD counts May 1 once", "20270401T090000",
     "FREQ=MONTHLY;BYMONTHDAY=1,31;SKIP=FORWARD;COUNT=12"),
    ("yearly on February 30, SKIP=FORWARD", "20270101T090000", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30;SKIP=FORWARD;COUNT=4"),
    ("monthly on the 31st, last of the set, SKIP=BACKWARD", "20270131T090000",
     "FREQ=MONTHLY;BYMONTHDAY=29,31;BYSETPOS=-1;SKIP=BACKWARD;COUNT=14"),
]

# Other edges: starts that do not match the rule, rules that can never match again,
# exceptions together with COUNT, 31st and February 29 starts.
EDGE_CASES = [
    ("start not matching the rule counts first", "20270303T090000", "FREQ=WEEKLY;BYDAY=MO;COUNT=3"),
    ("start not matching a monthly ordinal", "20270310T090000", "FREQ=MONTHLY;BYDAY=-1FR;COUNT=4"),
    ("never matches again: February 30", "20270105T090000", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"),
    ("never matches again: April 31 and June 31", "20270105T090000", "FREQ=MONTHLY;BYMONTH=4,6;BYMONTHDAY=31"),
    ("fifth Friday of February: leap years with February 29 a Friday", "20270105T090000", "FREQ=YEARLY;BYMONTH=2;BYDAY=5FR"),
    ("monthly from the 31st omits short months", "20270131T090000", "FREQ=MONTHLY;COUNT=8"),
    ("yearly from February 29 is every fourth year", "20280229T090000", "FREQ=YEARLY;COUNT=5"),
    ("exceptions are removed after COUNT", "20270301T090000", "FREQ=DAILY;COUNT=5",
     ["20270302T090000", "20270304T090000"]),
    ("BYMONTHDAY=-31 only in 31-day months", "20270101T090000", "FREQ=MONTHLY;BYMONTHDAY=-31;COUNT=6"),
    ("yearly last Sunday of October (European DST end)", "20271031T010000", "FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU"),
    ("yearly last Monday of the year", "20271227T090000", "FREQ=YEARLY;BYDAY=-1MO;COUNT=6"),
    ("DATE until includes the whole day", "20270301T230000", "FREQ=DAILY;UNTIL=20270305"),
    ("local until is inclusive", "20270301T090000", "FREQ=DAILY;UNTIL=20270305T090000"),
    ("local until a minute early", "20270301T090000", "FREQ=DAILY;UNTIL=20270305T085900"),
    ("weekly every other week, WKST=SU from a Sunday", "20270307T090000", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU,SA;WKST=SU;COUNT=8"),
    ("weekly every other week, WKST=MO from a Sunday", "20270307T090000", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU,SA;WKST=MO;COUNT=8"),
    ("daily with BYSETPOS=1", "20270101T090000", "FREQ=DAILY;BYMONTH=2;BYSETPOS=1;COUNT=5"),
    ("interval 1000 years", "20270101T090000", "FREQ=YEARLY;INTERVAL=1000"),
    ("ends at year 9999", "99991225T090000", "FREQ=DAILY"),
]


# --------------------------------------------------------------------- random cases

def random_start(rng):
    year = rng.randint(1995, 2035)
    roll = rng.random()
    if roll < 0.15:
        year = rng.choice([y for y in range(1996, 2036, 4)])
        month, day = 2, 29
    elif roll < 0.45:
        day = rng.choice([29, 30, 31])
        month = rng.choice([m for m in range(1, 13) if month_day(year, m, day, "OMIT") is not None])
    else:
        month = rng.randint(1, 12)
        day = rng.randint(1, 28)
    hour, minute = rng.choice([(9, 0), (0, 0), (23, 30), (7, 15), (18, 45), (12, 0)])
    return dt.datetime(year, month, day, hour, minute)


def random_months(rng, start):
    """One to four months, half the time including the start's (so that fewer rules
    with an INTERVAL can never match)."""
    months = set(rng.sample(range(1, 13), rng.randint(1, 4)))
    if rng.random() < 0.5:
        months.add(start.month)
    return ",".join(str(m) for m in sorted(months))


def random_month_days(rng):
    pool = [1, 2, 5, 10, 13, 15, 20, 28, 29, 29, 30, 30, 31, 31, -1, -1, -2, -3, -7, -28, -29, -30, -31]
    return sorted(set(rng.sample(pool, rng.randint(1, 3))), key=lambda v: (v < 0, abs(v)))


def random_by_day(rng, freq, has_by_month):
    if freq in ("MONTHLY", "YEARLY") and rng.random() < 0.5:
        month_relative = freq == "MONTHLY" or has_by_month
        ordinals = [1, 2, 3, 4, 5, -1, -2, -5] if month_relative else [1, 2, 3, -1, -2, 10, 20, 26, -10, 53, -53]
        values = set()
        for _ in range(rng.randint(1, 3)):
            values.add(f"{rng.choice(ordinals)}{rng.choice(WEEKDAYS)}")
        return sorted(values)
    return [WEEKDAYS[i] for i in sorted(rng.sample(range(7), rng.randint(1, 4)))]


def random_until(rng, start, freq):
    horizon = {"DAILY": 90, "WEEKLY": 500, "MONTHLY": 2000, "YEARLY": 12000}[freq]
    moment = start + dt.timedelta(days=rng.randint(0, horizon), hours=rng.randint(0, 23), minutes=rng.choice([0, 30, 59]))
    if moment.year > 9999:
        moment = dt.datetime(9999, 12, 31, 23, 59)
    form = rng.choice(["date", "local", "utc"])
    if form == "date":
        return moment.strftime("%Y%m%d")
    return moment.strftime("%Y%m%dT%H%M%S") + ("Z" if form == "utc" else "")


def random_rule(rng, start):
    freq = rng.choice(["DAILY", "WEEKLY", "WEEKLY", "MONTHLY", "MONTHLY", "MONTHLY", "YEARLY", "YEARLY"])
    parts = {"FREQ": freq}
    interval = rng.choice([1, 1, 1, 1, 2, 2, 3, 4, 5, 7, 12])
    if interval != 1 or rng.random() < 0.05:
        parts["INTERVAL"] = str(interval)
    if rng.random() < 0.3:
        parts["BYMONTH"] = random_months(rng, start)
    if freq != "WEEKLY" and rng.random() < 0.4:
        parts["BYMONTHDAY"] = ",".join(str(d) for d in random_month_days(rng))
    if rng.random() < (0.7 if freq == "WEEKLY" else 0.45):
        parts["BYDAY"] = ",".join(random_by_day(rng, freq, "BYMONTH" in parts))
    if len(parts) > (2 if "INTERVAL" in parts else 1) and rng.random() < 0.3:
        positions = [1, 2, 3, -1, -2, -3, 4, -4] if freq != "DAILY" else [1, -1]
        parts["BYSETPOS"] = ",".join(str(p) for p in sorted(set(rng.sample(positions, rng.randint(1, 2)))))
    if freq == "WEEKLY" and rng.random() < 0.6:
        parts["WKST"] = rng.choice(WEEKDAYS)
    roll = rng.random()
    if roll < 0.35:
        parts["COUNT"] = str(rng.randint(1, 40))
    elif roll < 0.65:
        parts["UNTIL"] = random_until(rng, start, freq)
    names = list(parts)
    if rng.random() < 0.3:  # parts in any order
        rest = names[1:]
        rng.shuffle(rest)
        names = [names[0]] + rest
    return ";".join(f"{name}={parts[name]}" for name in names)


def is_rare(start, rule):
    """Whether a DAILY/WEEKLY rule has nothing in the 40 years after its start: dateutil
    would walk day by day to the year 9999 for it, which takes minutes."""
    parts = rule_parts(rule)
    if parts["FREQ"] not in ("DAILY", "WEEKLY"):
        return False
    parts.pop("COUNT", None)
    until = until_moment(parts.pop("UNTIL")) if "UNTIL" in parts else None
    horizon = start + dt.timedelta(days=40 * 366)
    if until is not None and until < horizon:
        return False
    probe = rrulestr(join_parts(parts), dtstart=start).replace(until=horizon)
    return not any(moment > start for moment in itertools.islice(probe, 2))


def random_skip_rule(rng, start):
    freq = rng.choice(["MONTHLY", "MONTHLY", "YEARLY"])
    parts = {"FREQ": freq}
    if rng.random() < 0.3:
        parts["INTERVAL"] = str(rng.choice([2, 3, 5]))
    if rng.random() < 0.3:
        parts["BYMONTH"] = random_months(rng, start)
    if rng.random() < 0.6:
        parts["BYMONTHDAY"] = ",".join(str(d) for d in sorted(set(rng.sample([1, 15, 28, 29, 30, 31, -1], rng.randint(1, 3)))))
    if ("BYMONTH" in parts or "BYMONTHDAY" in parts) and rng.random() < 0.3:
        parts["BYSETPOS"] = rng.choice(["1", "-1", "2"])
    parts["SKIP"] = rng.choice(["BACKWARD", "FORWARD", "FORWARD", "BACKWARD", "OMIT"])
    roll = rng.random()
    if roll < 0.4:
        parts["COUNT"] = str(rng.randint(1, 30))
    elif roll < 0.7:
        parts["UNTIL"] = random_until(rng, start, freq)
    return join_parts(parts)


# -------------------------------------------------------------------------- output

def make_case(name, source, start, rule, exdates=()):
    occurrences = expected_occurrences(start, rule, list(exdates))
    case = {"name": name, "source": source, "start": fmt(start), "rrule": rule}
    if exdates:
        case["exdates"] = [fmt(moment) for moment in exdates]
    case["occurrences"] = [fmt(moment) for moment in occurrences]
    return case


def hand_cases(table, source):
    for entry in table:
        name, start, rule = entry[:3]
        exdates = [parse_compact(text) for text in (entry[3] if len(entry) > 3 else [])]
        yield make_case(name, source, parse_compact(start), rule, exdates)


def random_cases(rng):
    made = 0
    while made < RANDOM_CASES:
        start = random_start(rng)
        rule = random_rule(rng, start)
        if is_rare(start, rule):
            continue
        exdates = []
        if rng.random() < 0.1:  # except one or two occurrences
            plain = expected_occurrences(start, rule, [])
            exdates = rng.sample(plain, min(len(plain), rng.randint(1, 2)))
        made += 1
        yield make_case(f"random {made}", "random", start, rule, sorted(exdates))
    for index in range(1, RANDOM_SKIP_CASES + 1):
        start = random_start(rng)
        yield make_case(f"random skip {index}", "random-skip", start, random_skip_rule(rng, start))


def main():
    rng = random.Random(SEED)
    cases = []
    cases += hand_cases(RFC5545, "rfc5545")
    cases += hand_cases(SKIP_CASES, "rfc7529")
    cases += hand_cases(EDGE_CASES, "edge")
    cases += random_cases(rng)
    corpus = {
        "generator": "make_rrule_corpus.py",
        "oracle": f"python-dateutil {dateutil.__version__}",
        "seed": SEED,
        "limit": LIMIT,
        "zone": "UTC",
        "cases": cases,
    }
    path = os.path.join(HERE, "rrule-corpus.json")
    with open(path, "w") as output:
        json.dump(corpus, output, indent=1)
        output.write("\n")
    print(f"{len(cases)} cases -> {path}")


if __name__ == "__main__":
    main()
