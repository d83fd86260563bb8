#!/usr/bin/env python3
"""A fake payment provider for booking's tests, on loopback only.

POST /payments with {"id", "amount", "description", "callbackUrl"} answers 201
{"id": "prov-<n>", "status": "pending", "confirmationUrl"} and, a moment later, calls
callbackUrl with {"id", "paymentId", "status": "succeeded"} signed in X-Signature
(hex HMAC-SHA256 of the body with the shared secret), as a real provider would.
Every create call is written to <folder>/payment-<n>.json.

Usage: fake_payments.py <port> <secret> <folder> [silent] [slow]. With `silent` it never
calls back (a payment the rider never confirms); with `slow` it answers a create after a
second (retries arriving meanwhile). Stops on SIGTERM or when its parent exits.
"""
import hashlib
import hmac
import json
import os
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, SECRET, FOLDER = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3]
SILENT = "silent" in sys.argv[4:]
SLOW = "slow" in sys.argv[4:]
lock = threading.Lock()
count = [0]


def call_back(url, body):
    time.sleep(0.2)
    data = json.dumps(body).encode()
    signature = hmac.new(SECRET, data, hashlib.sha256).hexdigest()
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json", "X-Signature": signature})
    for _ in range(20):
        try:
            urllib.request.urlopen(request, timeout=5).read()
            return
        except Exception:
            time.sleep(0.25)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with lock:
            count[0] += 1
            number = count[0]
        record = {"authorization": self.headers.get("Authorization"),
                  "idempotencyKey": self.headers.get("Idempotency-Key"), "body": body}
        path = os.path.join(FOLDER, f"payment-{number}.json")
        with open(path + ".tmp", "w") as out:
            json.dump(record, out)
        os.rename(path + ".tmp", path)
        if SLOW:
            time.sleep(1)
        reference = f"prov-{number}"
        answer = json.dumps({"id": reference, "status": "pending",
                             "confirmationUrl": f"http://127.0.0.1:{PORT}/confirm/{reference}"}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
        if SILENT:
            return
        threading.Thread(target=call_back, args=(body["callbackUrl"],
                         {"id": reference, "paymentId": body["id"], "status": "succeeded"}), daemon=True).start()


def main():
    server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("ready", flush=True)
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)


if __name__ == "__main__":
    main()
