#!/usr/bin/env python3
"""Writes ru-public-holidays-1991-2030.json: Russia's public holidays (non-working days)
for every year 1991-2030 by the PyPI `holidays` package, an implementation independent
of HolidaysRU.swift, without the days off moved from weekends (by the Labour Code's
rule or the yearly decrees), which the catalog does not model.

    pip install holidays
    python3 make_ru_holidays_table.py      # run in this folder

The output is committed; HolidayCatalogTests reads it.
"""
import json
import pathlib

import holidays

rows = []
for year in range(1991, 2031):
    calendar = holidays.country_holidays("RU", years=year, observed=False, language="en_US")
    dates = sorted(day.isoformat() for day, name in calendar.items() if not name.startswith("Day off"))
    rows.append({"year": year, "dates": dates})
table = {"source": f"holidays {holidays.__version__}, country_holidays('RU', observed=False), without 'Day off (substituted ...)'", "rows": rows}
path = pathlib.Path(__file__).with_name("ru-public-holidays-1991-2030.json")
path.write_text(json.dumps(table, indent=1) + "\n")
print(f"wrote {len(rows)} rows to {path.name}")
