#!/usr/bin/env python3
"""Writes .ics fixtures with the Python `icalendar` package (another implementation than
ours), plus `icalendar-python-expected.json`: what each file must parse to, built from the
same inputs (not by parsing the files back).

Run from anywhere: `python3 make_ics_fixtures.py` (writes next to this script). The
outputs are committed; the Swift tests read them (ICalendarFixtureTests.swift), so the
script only runs again when a fixture changes. Written with icalendar 7.3.

JSON shape of a calendar: {"productID", "name", "events": [event]}; an event has the
fields of ICalEvent; a date-time is {"date": "YYYY-MM-DD"}, {"floating":
"YYYY-MM-DDTHH:MM:SS"}, {"zoned": "YYYY-MM-DDTHH:MM:SS", "zone": IANA} or {"utc":
"YYYY-MM-DDTHH:MM:SSZ"}; a trigger is {"relative": seconds, "fromEnd": bool} or
{"absolute": "...Z"}.
"""

import datetime as dt
import json
import pathlib
from zoneinfo import ZoneInfo

import icalendar

HERE = pathlib.Path(__file__).resolve().parent
PRODID = "-//Reminders fixtures//Python icalendar %s//EN" % icalendar.__version__
STAMP = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
UTC = dt.timezone.utc
MOSCOW = ZoneInfo("Europe/Moscow")


# --- Expected values -------------------------------------------------------------------

def j_date(value):
    return {"date": value.isoformat()}


def j_time(value):
    """A datetime as the parser must read it: UTC, zoned or floating."""
    if value.tzinfo is None:
        return {"floating": value.strftime("%Y-%m-%dT%H:%M:%S")}
    if value.tzinfo is UTC:
        return {"utc": value.strftime("%Y-%m-%dT%H:%M:%SZ")}
    return {"zoned": value.strftime("%Y-%m-%dT%H:%M:%S"), "zone": value.tzinfo.key}


def j_any(value):
    return j_time(value) if isinstance(value, dt.datetime) else j_date(value)


def j_utc(value):
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def expected_event(uid, start, summary="", **fields):
    event = {
        "uid": uid, "summary": summary, "description": None, "location": None, "start": j_any(start),
        "end": None, "durationSeconds": None, "rrule": None, "exdates": [], "alarms": [], "categories": [],
        "status": None, "sequence": None, "lastModified": None, "created": None, "recurrenceID": None,
    }
    for key, value in fields.items():
        assert key in event, key
        event[key] = value
    return event


def expected_alarm(trigger, action, description=None, repeat=None, interval=None):
    return {"trigger": trigger, "action": action, "description": description,
            "repeatCount": repeat, "repeatIntervalSeconds": interval}


# --- Building ---------------------------------------------------------------------------

def calendar(name=None):
    cal = icalendar.Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    if name is not None:
        cal.add("x-wr-calname", name)
    return cal


def event(uid, start, summary=None):
    ev = icalendar.Event()
    ev.add("uid", uid)
    ev.add("dtstamp", STAMP)
    ev.add("dtstart", start)
    if summary is not None:
        ev.add("summary", summary)
    return ev


def alarm(action, trigger, description=None, **params):
    al = icalendar.Alarm()
    al.add("action", action)
    al.add("trigger", trigger, parameters=params or None)
    if description is not None:
        al.add("description", description)
    return al


def rrule_text(ev):
    return ev["rrule"].to_ical().decode()


fixtures = {}


def save(name, cal, expected_events, calendar_name=None):
    (HERE / name).write_bytes(cal.to_ical())
    fixtures[name] = {"productID": PRODID, "name": calendar_name, "events": expected_events}


# 1. A birthday: all day, every year.
cal = calendar()
ev = event("birthday-anna@example.com", dt.date(1990, 3, 14), "Anna's birthday")
ev.add("dtend", dt.date(1990, 3, 15))
ev.add("rrule", {"freq": "yearly"})
ev.add("categories", ["Birthday"])
ev.add("transp", "TRANSPARENT")
cal.add_component(ev)
save("python-birthday.ics", cal, [expected_event(
    "birthday-anna@example.com", dt.date(1990, 3, 14), "Anna's birthday", end=j_date(dt.date(1990, 3, 15)),
    rrule=rrule_text(ev), categories=["Birthday"])])

# 2. A weekly meeting in Moscow, two dates cancelled, a reminder 15 minutes before, and one
#    occurrence moved (RECURRENCE-ID). With the VTIMEZONE icalendar generates.
cal = calendar()
start = dt.datetime(2027, 1, 11, 10, 0, tzinfo=MOSCOW)
ev = event("weekly-sync@example.com", start, "Weekly sync")
ev.add("dtend", start + dt.timedelta(hours=1))
ev.add("rrule", {"freq": "weekly", "byday": "MO", "until": dt.datetime(2027, 6, 28, 7, 0, tzinfo=UTC)})
cancelled = [dt.datetime(2027, 2, 22, 10, 0, tzinfo=MOSCOW), dt.datetime(2027, 3, 8, 10, 0, tzinfo=MOSCOW)]
ev.add("exdate", cancelled)
ev.add("exdate", dt.datetime(2027, 5, 3, 10, 0, tzinfo=MOSCOW))
ev.add("location", "Room 5, 2nd floor")
ev.add_component(alarm("DISPLAY", dt.timedelta(minutes=-15), "Weekly sync in 15 minutes"))
cal.add_component(ev)
moved = event("weekly-sync@example.com", dt.datetime(2027, 1, 25, 12, 0, tzinfo=MOSCOW), "Weekly sync (moved)")
moved.add("dtend", dt.datetime(2027, 1, 25, 13, 0, tzinfo=MOSCOW))
moved.add("recurrence-id", dt.datetime(2027, 1, 25, 10, 0, tzinfo=MOSCOW))
moved.add("sequence", 1)
cal.add_component(moved)
cal.add_missing_timezones()
save("python-weekly-moscow.ics", cal, [
    expected_event(
        "weekly-sync@example.com", start, "Weekly sync", end=j_time(start + dt.timedelta(hours=1)),
        rrule=rrule_text(ev), exdates=[j_time(d) for d in cancelled] + [j_time(dt.datetime(2027, 5, 3, 10, 0, tzinfo=MOSCOW))],
        location="Room 5, 2nd floor",
        alarms=[expected_alarm({"relative": -900, "fromEnd": False}, "DISPLAY", "Weekly sync in 15 minutes")]),
    expected_event(
        "weekly-sync@example.com", dt.datetime(2027, 1, 25, 12, 0, tzinfo=MOSCOW), "Weekly sync (moved)",
        end=j_time(dt.datetime(2027, 1, 25, 13, 0, tzinfo=MOSCOW)), sequence=1,
        recurrenceID=j_time(dt.datetime(2027, 1, 25, 10, 0, tzinfo=MOSCOW))),
])

# 3. A UTC event with a duration and the metadata properties.
cal = calendar()
start = dt.datetime(2027, 4, 2, 14, 30, tzinfo=UTC)
ev = event("launch@example.com", start, "Launch call")
ev.add("duration", dt.timedelta(hours=1, minutes=30))
ev.add("status", "CONFIRMED")
ev.add("sequence", 4)
ev.add("created", dt.datetime(2027, 3, 1, 8, 0, 5, tzinfo=UTC))
ev.add("last-modified", dt.datetime(2027, 3, 20, 17, 45, tzinfo=UTC))
ev.add("description", "Dial-in: +1 555 0100; code 1234")
cal.add_component(ev)
save("python-utc.ics", cal, [expected_event(
    "launch@example.com", start, "Launch call", durationSeconds=5400, status="CONFIRMED", sequence=4,
    created=j_utc(dt.datetime(2027, 3, 1, 8, 0, 5, tzinfo=UTC)),
    lastModified=j_utc(dt.datetime(2027, 3, 20, 17, 45, tzinfo=UTC)),
    description="Dial-in: +1 555 0100; code 1234")])

# 4. Cyrillic text with commas, semicolons and line breaks, long enough to fold.
summary = "Родительское собрание, 5 «Б» класс; важно"
description = ("Повестка дня:\n1. Итоги четверти, оценки и посещаемость;\n"
               "2. Подготовка к экскурсии в Москву, сбор денег (по 1500 ₽);\n"
               "3. Разное.\nПросьба приходить без опозданий, собрание начнётся ровно в 18:30.")
cal = calendar("Школа — 5 «Б»")
start = dt.datetime(2027, 3, 18, 18, 30, tzinfo=MOSCOW)
ev = event("school-meeting@example.ru", start, summary)
ev.add("dtend", start + dt.timedelta(hours=2))
ev.add("description", description)
ev.add("location", "Школа № 57, кабинет 214, Малый Знаменский пер., 7/10")
ev.add("categories", ["Школа", "Семья, дети"])
cal.add_component(ev)
cal.add_missing_timezones()
save("python-cyrillic.ics", cal, [expected_event(
    "school-meeting@example.ru", start, summary, description=description, end=j_time(start + dt.timedelta(hours=2)),
    location="Школа № 57, кабинет 214, Малый Знаменский пер., 7/10", categories=["Школа", "Семья, дети"])],
    calendar_name="Школа — 5 «Б»")

# 5. Every last Friday of the month, floating time (no zone), a cancelled date as a DATE.
cal = calendar()
start = dt.datetime(2027, 1, 29, 17, 0)
ev = event("last-friday@example.com", start, "Team drinks")
ev.add("dtend", dt.datetime(2027, 1, 29, 19, 0))
ev.add("rrule", {"freq": "monthly", "byday": "-1FR"})
ev.add("exdate", [dt.date(2027, 12, 31)])
ev.add("status", "tentative")
cal.add_component(ev)
save("python-monthly-last-friday.ics", cal, [expected_event(
    "last-friday@example.com", start, "Team drinks", end=j_time(dt.datetime(2027, 1, 29, 19, 0)),
    rrule=rrule_text(ev), exdates=[j_date(dt.date(2027, 12, 31))], status="TENTATIVE")])

# 6. Two alarms: one at an absolute time (icalendar writes TRIGGER without VALUE=DATE-TIME),
#    one relative to the end, repeating.
cal = calendar()
start = dt.datetime(2027, 6, 10, 9, 0, tzinfo=UTC)
ev = event("dentist@example.com", start, "Dentist")
ev.add("dtend", dt.datetime(2027, 6, 10, 10, 0, tzinfo=UTC))
ev.add_component(alarm("AUDIO", dt.datetime(2027, 6, 9, 18, 0, tzinfo=UTC)))
late = alarm("DISPLAY", dt.timedelta(minutes=5), "Pay the bill", related="END")
late.add("repeat", 2)
late.add("duration", dt.timedelta(minutes=10))
ev.add_component(late)
cal.add_component(ev)
save("python-two-alarms.ics", cal, [expected_event(
    "dentist@example.com", start, "Dentist", end=j_time(dt.datetime(2027, 6, 10, 10, 0, tzinfo=UTC)),
    alarms=[
        expected_alarm({"absolute": "2027-06-09T18:00:00Z"}, "AUDIO"),
        expected_alarm({"relative": 300, "fromEnd": True}, "DISPLAY", "Pay the bill", repeat=2, interval=600),
    ])])

(HERE / "icalendar-python-expected.json").write_text(
    json.dumps(fixtures, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")
print("wrote", ", ".join(sorted(fixtures)))
