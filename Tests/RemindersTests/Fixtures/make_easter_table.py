#!/usr/bin/env python3
"""Writes easter-1900-2100.json: Western and Orthodox Easter Sunday (both as Gregorian
dates) for every year 1900-2100, computed by python-dateutil, an implementation
independent of Computus.swift.

    pip install python-dateutil
    python3 make_easter_table.py      # run in this folder

The output is committed; ComputusTests reads it.
"""
import json
import pathlib

import dateutil
from dateutil.easter import EASTER_ORTHODOX, EASTER_WESTERN, easter

rows = [
    {
        "year": year,
        "western": easter(year, EASTER_WESTERN).isoformat(),
        "orthodox": easter(year, EASTER_ORTHODOX).isoformat(),
    }
    for year in range(1900, 2101)
]
table = {"source": f"python-dateutil {dateutil.__version__}, dateutil.easter.easter", "rows": rows}
path = pathlib.Path(__file__).with_name("easter-1900-2100.json")
path.write_text(json.dumps(table, indent=1) + "\n")
print(f"wrote {len(rows)} rows to {path.name}")
