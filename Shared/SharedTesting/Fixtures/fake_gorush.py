#!/usr/bin/env python3
"""A local stand-in for a Gorush push gateway in sync mode, speaking its HTTP API.

POST /api/push takes {"notifications": [{"tokens": [...], "platform": 1|2, "message": ...}, ...]}
and answers {"counts": N, "logs": [...], "success": "ok"}, listing each push that failed as
{"type": "failed-push", "platform": "ios"|"android", "token", "message", "error"}: tokens
starting with "rejected" fail with APNs' BadDeviceToken (iOS) or FCM's NotRegistered (Android);
tokens starting with "flaky" fail once with a transient error. Requests break Gorush's rules
(no notifications, more than max_notification of them, a notification without tokens, platform
or message) get Gorush's 400 answers. Every push delivered is appended to the log file as one
JSON line {"token", "notificationId", "title", "message", "topic", "platform", "at"}.

Usage: fake_gorush.py <port> <log-file> [--delay-ms N] [--max-notification N]; prints "ready".
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port = int(sys.argv[1])
log_path = sys.argv[2]
delay = 0.0
max_notification = 100
arguments = sys.argv[3:]
while arguments:
    name = arguments.pop(0)
    if name == "--delay-ms":
        delay = int(arguments.pop(0)) / 1000.0
    elif name == "--max-notification":
        max_notification = int(arguments.pop(0))

lock = threading.Lock()
flaky_seen = set()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/api/stat/go":
            self.answer(200, {"version": "fake"})
        else:
            self.answer(404, {"message": "not found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if self.path != "/api/push":
            return self.answer(404, {"message": "not found"})
        try:
            request = json.loads(raw)
        except ValueError:
            return self.answer(400, {"message": "Missing notifications field."})
        notifications = request.get("notifications")
        if notifications is None:
            return self.answer(400, {"message": "Missing notifications field."})
        if len(notifications) == 0:
            return self.answer(400, {"message": "Notifications field is empty."})
        if len(notifications) > max_notification:
            return self.answer(400, {"message": "Number of notifications(%d) over limit(%d)" % (len(notifications), max_notification)})
        for notification in notifications:
            if not notification.get("tokens") or notification.get("platform") not in (1, 2) or "message" not in notification:
                return self.answer(400, {"message": "Invalid notification: tokens, platform and message are required."})
        if delay:
            time.sleep(delay)
        logs = []
        delivered = []
        count = 0
        now = time.time()
        for notification in notifications:
            platform = "ios" if notification["platform"] == 1 else "android"
            for token in notification["tokens"]:
                count += 1
                error = None
                if token.startswith("rejected"):
                    error = "BadDeviceToken" if platform == "ios" else "NotRegistered"
                elif token.startswith("flaky"):
                    with lock:
                        if token not in flaky_seen:
                            flaky_seen.add(token)
                            error = "Post https://api.push.apple.com/3/device/x: connection reset by peer"
                if error:
                    logs.append({"type": "failed-push", "platform": platform, "token": token, "message": notification["message"], "error": error})
                    continue
                delivered.append(json.dumps({
                    "token": token,
                    "notificationId": notification.get("data", {}).get("notificationId"),
                    "title": notification.get("title"),
                    "message": notification["message"],
                    "topic": notification.get("topic"),
                    "platform": notification["platform"],
                    "at": now,
                }))
        if delivered:
            with lock:
                with open(log_path, "a") as log:
                    log.write("\n".join(delivered) + "\n")
        self.answer(200, {"counts": count, "logs": logs, "success": "ok"})


server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
print("ready", flush=True)
server.serve_forever()
