"""Validates the edge's OpenAPI document: python3 check_openapi.py <url of openapi.json>.

Exits 0 when openapi-spec-validator accepts it as OpenAPI 3.1 and it lists the operations
the test names after the URL; prints the problem and exits 1 otherwise."""
import json
import sys
import urllib.request

from openapi_spec_validator import validate

url, wanted = sys.argv[1], sys.argv[2:]
with urllib.request.urlopen(url, timeout=10) as response:
    document = json.load(response)
validate(document)
ids = {operation.get("operationId") for path in document["paths"].values() for operation in path.values()}
missing = [op for op in wanted if op not in ids]
if missing:
    print("missing operations:", missing)
    sys.exit(1)
print("valid OpenAPI", document["openapi"], "with", len(document["paths"]), "paths")
