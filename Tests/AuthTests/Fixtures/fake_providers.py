#!/usr/bin/env python3
"""Fake external providers for auth's tests, on loopback only, speaking the real
protocols: an SMTP relay (RFC 5321), an SMS JSON webhook, and the Facebook Graph API
(`debug_token` and `/me`, with the API's JSON shapes for valid and invalid tokens).

Usage: fake_providers.py <smtp-port> <http-port> <folder>
Every mail is written to <folder>/mail-<n>.eml, every SMS call to <folder>/sms-<n>.json.
Tests make it misbehave with `POST /control {"refuseSms": n, "smsStatus": 503,
"refuseMail": n, "mailCode": 451, "smsDelayMs": ms}`: the next n SMS calls are answered
`smsStatus`, the next n mails refused at MAIL FROM with `mailCode`, and SMS answers wait
`smsDelayMs`; each refusal is written to <folder>/smsrefused-<n>.json or mailrefused-<n>.json
(with the time it came, `at`, in seconds), and each accepted SMS call carries its `at` too.
Standard library only; stops on SIGTERM or when its parent process exits.
"""
import json
import os
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

SMTP_PORT, HTTP_PORT, FOLDER = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
APP_ID, APP_SECRET = "test-app", "test-secret"
USERS = {
    "valid-anna": {"id": "10001", "name": "Anna Ivanova", "email": "anna@example.com"},
    "valid-noemail": {"id": "10002", "name": "Boris Petrov"},
    "other-app": {"id": "10003", "name": "Eve Other", "email": "eve@example.com"},
}
counter_lock = threading.Lock()
counter = [0]
control = {"refuseSms": 0, "smsStatus": 503, "refuseMail": 0, "mailCode": 451, "smsDelayMs": 0}


def take_refusal(kind):
    """Whether this call is refused, counting it down."""
    with counter_lock:
        if control[kind] > 0:
            control[kind] -= 1
            return True
        return False


def write_json(prefix, record):
    path = next_path(prefix, ".json")
    with open(path + ".tmp", "w") as out:
        json.dump(record, out)
    os.rename(path + ".tmp", path)


def next_path(prefix, suffix):
    with counter_lock:
        counter[0] += 1
        return os.path.join(FOLDER, f"{prefix}-{counter[0]}{suffix}")


class SMTPHandler(socketserver.StreamRequestHandler):
    def reply(self, line):
        self.wfile.write((line + "\r\n").encode())

    def handle(self):
        self.reply("220 fake-relay ESMTP")
        sender, recipients = None, []
        while True:
            line = self.rfile.readline()
            if not line:
                return
            command = line.decode(errors="replace").strip()
            verb = command.split(" ", 1)[0].upper()
            if verb == "EHLO":
                self.reply("250-fake-relay")
                self.reply("250 8BITMIME")
            elif verb == "HELO":
                self.reply("250 fake-relay")
            elif verb == "MAIL":
                if take_refusal("refuseMail"):
                    code = control["mailCode"]
                    write_json("mailrefused", {"at": time.time(), "code": code})
                    self.reply(f"{code} {'4.3.0 Try again later' if code < 500 else '5.1.1 Mailbox unavailable'}")
                    continue
                sender, recipients = command[10:], []
                self.reply("250 OK")
            elif verb == "RCPT":
                recipients.append(command[8:])
                self.reply("250 OK")
            elif verb == "DATA":
                self.reply("354 End data with <CR><LF>.<CR><LF>")
                lines = []
                while True:
                    data = self.rfile.readline()
                    if not data or data in (b".\r\n", b".\n"):
                        break
                    lines.append(data[1:] if data.startswith(b"..") else data)
                path = next_path("mail", ".eml")
                with open(path + ".tmp", "wb") as out:
                    out.write(f"X-Envelope-From: {sender}\r\nX-Envelope-To: {','.join(recipients)}\r\n".encode())
                    out.write(b"".join(lines))
                os.rename(path + ".tmp", path)
                self.reply("250 OK: queued")
            elif verb in ("RSET", "NOOP"):
                self.reply("250 OK")
            elif verb == "QUIT":
                self.reply("221 Bye")
                return
            else:
                self.reply("502 Command not implemented")


class HTTPHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if urlparse(self.path).path == "/control":
            with counter_lock:
                control.update(json.loads(body))
            return self.send_json(200, control)
        if urlparse(self.path).path != "/sms":
            return self.send_json(404, {"error": "not found"})
        record = {
            "at": time.time(),
            "authorization": self.headers.get("Authorization"),
            "idempotencyKey": self.headers.get("Idempotency-Key"),
            "body": json.loads(body),
        }
        time.sleep(control["smsDelayMs"] / 1000)
        if take_refusal("refuseSms"):
            write_json("smsrefused", record)
            return self.send_json(control["smsStatus"], {"error": "try again later"})
        write_json("sms", record)
        self.send_json(200, {"status": "queued"})

    def do_GET(self):
        url = urlparse(self.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        invalid = {"error": {"message": "Invalid OAuth access token - Cannot parse access token",
                             "type": "OAuthException", "code": 190, "fbtrace_id": "AbCdEf"}}
        if url.path.endswith("/debug_token"):
            if query.get("access_token") != f"{APP_ID}|{APP_SECRET}":
                return self.send_json(400, invalid)
            user = USERS.get(query.get("input_token", ""))
            if user is None:
                return self.send_json(200, {"data": {
                    "error": {"code": 190, "message": "Invalid OAuth access token."},
                    "is_valid": False, "scopes": []}})
            app = "another-app" if query["input_token"] == "other-app" else APP_ID
            return self.send_json(200, {"data": {
                "app_id": app, "type": "USER", "application": "Goals", "data_access_expires_at": 1900000000,
                "expires_at": 1900000000, "is_valid": True, "scopes": ["email", "public_profile"],
                "user_id": user["id"]}})
        if url.path.endswith("/me"):
            user = USERS.get(query.get("access_token", ""))
            if user is None:
                return self.send_json(400, invalid)
            fields = query.get("fields", "id").split(",")
            return self.send_json(200, {key: value for key, value in user.items() if key in fields})
        self.send_json(404, {"error": {"message": "Unknown path", "type": "GraphMethodException", "code": 100}})


class ThreadingTCP(socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    smtp = ThreadingTCP(("127.0.0.1", SMTP_PORT), SMTPHandler)
    http = ThreadingHTTPServer(("127.0.0.1", HTTP_PORT), HTTPHandler)
    for server in (smtp, http):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print("ready", flush=True)
    # Runs until SIGTERM, or until the test process that started it is gone.
    parent = os.getppid()
    while os.getppid() == parent:
        threading.Event().wait(0.5)


if __name__ == "__main__":
    main()
