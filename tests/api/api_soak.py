"""The API soak: `llm-workbench-cli serve` on the starter model under a seeded random mix of well- and ill-behaved
clients, several at once, for a bounded time. Plain python3 (stdlib sockets and threads), no network beyond
127.0.0.1.

    python3 api_soak.py CLI MODEL

Environment:
    WB_API_SOAK_SECONDS   length of the walk (default 30; CI runs the default, an hour is WB_API_SOAK_SECONDS=3600)
    WB_API_SOAK_SEED      the walk's seed (default: from the clock; printed at the start and on failure)
    WB_API_SOAK_CLIENTS   client threads (default 6)
    WB_API_SOAK_HEALTH_MS the bound on a /health answer during the walk (default 3000: CI shares two cores)

Each client thread draws its actions from random.Random(seed, client), so a seed replays the same actions per
client; how they interleave depends on timing. The actions: chat and legacy completions, streamed or not, n > 1,
stop strings, logprobs; bodies that are not JSON or carry bad parameters; a wrong key; unknown routes; headers over
the server's 32 KiB limit and a Content-Length over its 8 MiB; random bytes; slowloris requests (a partial request
sent slowly, then abandoned or left to time out); clients that hang up mid-stream; and bursts beyond the queue
(--parallel 3 --queue 3), which must answer 503 with Retry-After.

Invariants checked:
    - every answer is well-formed: a status line, Content-Length matching the body, JSON bodies that parse (an error
      object for every 4xx/5xx), event streams of "data: {json}" events ending with "data: [DONE]" unless the client
      cut them, each choice finishing once; statuses are the ones the request calls for;
    - /health (polled by its own thread) answers 200 within the bound throughout;
    - the server process never dies, and every line it logs is a JSON object;
    - after the walk, /health reports no other open connection and no running or queued generation within 15 s;
    - resident memory has no growth trend (the last third of the samples against the middle third);
    - SIGTERM ends the server cleanly (exit status 0).
Exits non-zero on the first violation, naming the seed.
"""
import json
import os
import random
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

KEY = "sk-soak"
STATUS_LINE = re.compile(rb"^HTTP/1\.1 (\d{3}) [^\r\n]+$")
KNOWN_STATUSES = {200, 400, 401, 403, 404, 405, 408, 411, 413, 431, 501, 503, 505}


class Violation(Exception):
    pass


def check(ok, what):
    if not ok:
        raise Violation(what)


# --- HTTP over a raw socket ----------------------------------------------------------------------------------------
def connect(port, timeout=120.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_all(s):
    """Everything until the server closes (every answer is "Connection: close")."""
    chunks = []
    while True:
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            break
        if not b:
            break
        chunks.append(b)
    return b"".join(chunks)


def request_bytes(method, path, body=b"", key=KEY, extra=()):
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n" % (method, path)
    if key:
        head += "Authorization: Bearer %s\r\n" % key
    if body or method == "POST":
        head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    for k, v in extra:
        head += "%s: %s\r\n" % (k, v)
    return head.encode() + b"\r\n" + body


def split_response(raw):
    """(status, headers dict lower-cased, body) of a whole answer; raises Violation when malformed."""
    end = raw.find(b"\r\n\r\n")
    check(end > 0, "no end of head in the answer: %r" % raw[:200])
    lines = raw[:end].split(b"\r\n")
    m = STATUS_LINE.match(lines[0])
    check(m is not None, "bad status line %r" % lines[0])
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        check(sep == b":" and name and name == name.strip(), "bad header line %r" % line)
        headers[name.decode().lower()] = value.strip().decode()
    check(headers.get("connection") == "close", "no Connection: close")
    return int(m.group(1)), headers, raw[end + 4:]


def check_json_answer(status, headers, body):
    check(headers.get("content-type") == "application/json", "content type %r" % headers.get("content-type"))
    check(headers.get("content-length") == str(len(body)),
          "Content-Length %s but %d body bytes" % (headers.get("content-length"), len(body)))
    obj = json.loads(body)
    check(isinstance(obj, dict), "JSON answer is not an object")
    if status >= 400:
        err = obj.get("error")
        check(isinstance(err, dict) and isinstance(err.get("message"), str) and err["message"],
              "error answer without error.message: %r" % body[:200])
        check(isinstance(err.get("type"), str), "error answer without error.type")
    if status == 503:
        check(headers.get("retry-after") == "1", "503 without Retry-After")
        check(obj["error"]["type"] == "server_busy", "503 of type %r" % obj["error"]["type"])
    return obj


def check_completion(obj, chat, n):
    check(obj.get("object") == ("chat.completion" if chat else "text_completion"), "object %r" % obj.get("object"))
    choices = obj.get("choices")
    check(isinstance(choices, list) and len(choices) == n, "%d choices for n=%d" % (len(choices or []), n))
    for i, c in enumerate(choices):
        check(c.get("index") == i, "choice index")
        check(c.get("finish_reason") in ("stop", "length", "content_filter"), "finish_reason %r" % c.get("finish_reason"))
        text = c["message"]["content"] if chat else c["text"]
        check(isinstance(text, str), "choice text")
    u = obj.get("usage", {})
    check(u.get("total_tokens") == u.get("prompt_tokens", -1) + u.get("completion_tokens", -1), "usage")


def check_stream(body, chat, n, complete):
    """The SSE body: events of JSON chunks, each choice finishing once, [DONE] last (when `complete`)."""
    events = body.split(b"\n\n")
    tail = events.pop()  # after the last "\n\n": empty, or a partial event when the client cut the stream
    check(not complete or tail == b"", "bytes after the last event: %r" % tail[:100])
    done = 0
    finished = {}
    for e in events:
        check(e.startswith(b"data: "), "event without 'data: ': %r" % e[:100])
        data = e[6:]
        if data == b"[DONE]":
            done += 1
            continue
        check(done == 0, "an event after [DONE]")
        chunk = json.loads(data)
        check(chunk.get("object") == ("chat.completion.chunk" if chat else "text_completion"), "chunk object")
        c = chunk["choices"][0]
        check(0 <= c["index"] < n, "chunk index %r for n=%d" % (c["index"], n))
        if c.get("finish_reason") is not None:
            check(c["index"] not in finished, "choice %d finished twice" % c["index"])
            finished[c["index"]] = c["finish_reason"]
    if complete:
        check(done == 1, "%d [DONE] events" % done)
        check(len(finished) == n, "%d of %d choices finished" % (len(finished), n))
    else:
        check(done <= 1, "several [DONE]")


# --- the actions ---------------------------------------------------------------------------------------------------
WORDS = "the cat sat on a mat Mia Tom ran to see big red dog what is 23 + 45 ? story about sun".split()


def prompt_text(rng, lo=1, hi=12):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def generation_body(rng, chat, stream):
    body = {"model": "starter", "max_tokens": rng.randint(1, 40), "temperature": rng.choice([0, 0.7, 1.0, 1.5]),
            "stream": stream}
    n = rng.choice([1, 1, 1, 2, 3])
    if n > 1:
        body["n"] = n
    if rng.random() < 0.3:
        body["stop"] = rng.choice(["\n", [".", "!"], ["the", "a", "?", "Tom"]])
    if rng.random() < 0.3:
        body["seed"] = rng.randint(0, 1000)
    if chat:
        body["messages"] = [{"role": "user", "content": prompt_text(rng)}]
        if rng.random() < 0.3:
            body["messages"].insert(0, {"role": "system", "content": "be brief"})
        if rng.random() < 0.2:
            body["logprobs"] = True
            body["top_logprobs"] = rng.randint(0, 3)
    else:
        body["prompt"] = prompt_text(rng)
        if rng.random() < 0.2:
            body["logprobs"] = rng.randint(0, 3)
    return body, n


def exchange(port, data):
    s = connect(port)
    try:
        s.sendall(data)
        return read_all(s)
    finally:
        s.close()


class Walker:
    def __init__(self, port, seed, client, deadline, stats, stop):
        self.port, self.client, self.deadline, self.stats, self.stop = port, client, deadline, stats, stop
        self.rng = random.Random("%d/%d" % (seed, client))

    def count(self, name):
        with self.stats["lock"]:
            self.stats[name] = self.stats.get(name, 0) + 1

    def run(self):
        actions = [(self.generate, 40), (self.hang_up_mid_stream, 6), (self.bad_json, 5), (self.bad_parameter, 6),
                   (self.wrong_key, 2), (self.unknown_route, 2), (self.oversized_header, 2), (self.oversized_body, 2),
                   (self.random_bytes, 3), (self.slowloris, 3), (self.burst, 2), (self.models, 2)]
        names = [a for a, _ in actions]
        weights = [w for _, w in actions]
        while time.monotonic() < self.deadline and not self.stop.is_set():
            action = self.rng.choices(names, weights)[0]
            action()
            self.count(action.__name__)

    def expect(self, raw, statuses, what):
        status, headers, body = split_response(raw)
        check(status in statuses, "%s: status %d, expected %s: %r" % (what, status, sorted(statuses), body[:300]))
        self.count("status_%d" % status)
        return status, headers, body

    def generate(self, chat=None, stream=None):
        chat = self.rng.random() < 0.6 if chat is None else chat
        stream = self.rng.random() < 0.5 if stream is None else stream
        body, n = generation_body(self.rng, chat, stream)
        path = "/v1/chat/completions" if chat else "/v1/completions"
        raw = exchange(self.port, request_bytes("POST", path, json.dumps(body).encode()))
        status, headers, payload = self.expect(raw, {200, 503}, "generate")
        if status == 503:
            time.sleep(self.rng.uniform(0.1, 1.0))  # as a client honouring Retry-After would, roughly
        if status == 200 and stream:
            check(headers.get("content-type") == "text/event-stream", "stream content type")
            check_stream(payload, chat, n, complete=True)
        else:
            obj = check_json_answer(status, headers, payload)
            if status == 200:
                check_completion(obj, chat, n)

    def hang_up_mid_stream(self):
        chat = self.rng.random() < 0.5
        body, n = generation_body(self.rng, chat, True)
        body["max_tokens"] = 150
        body["ignore_eos"] = True
        s = connect(self.port)
        try:
            s.sendall(request_bytes("POST", "/v1/chat/completions" if chat else "/v1/completions",
                                    json.dumps(body).encode()))
            got = b""
            want = self.rng.randint(1, 4000)
            while len(got) < want:
                b = s.recv(4096)
                if not b:
                    break
                got += b
            if self.rng.random() < 0.5:  # an abortive close (RST) or an orderly one (FIN)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        finally:
            s.close()
        if b"\r\n\r\n" in got:
            status, headers, payload = self.expect(got, {200, 503}, "hang-up")
            if status == 200:
                check_stream(payload, chat, n, complete=False)

    def bad_json(self):
        good = json.dumps({"prompt": "abc", "max_tokens": 2}).encode()
        bad = self.rng.choice([good[:self.rng.randint(0, len(good) - 1)], b"[1,2]", b"null", b"\xff\xfe{",
                               b'{"prompt": "a"}}', bytes(self.rng.randrange(256) for _ in range(40))])
        raw = exchange(self.port, request_bytes("POST", self.rng.choice(["/v1/completions", "/v1/chat/completions"]),
                                                bad))
        check_json_answer(*self.expect(raw, {400}, "bad JSON %r" % bad[:60]))

    def bad_parameter(self):
        chat = self.rng.random() < 0.5
        body, _ = generation_body(self.rng, chat, False)
        key, value = self.rng.choice([("temperature", 5), ("temperature", "hot"), ("n", 0), ("n", 17),
                                      ("max_tokens", -1), ("stop", [1]), ("stop", ["a"] * 5), ("top_p", 2),
                                      ("logit_bias", {"99999": 1}), ("stream", "yes"), ("seed", 0.5),
                                      ("messages" if chat else "prompt", []), ("ignore_eos", 1)])
        body[key] = value
        raw = exchange(self.port, request_bytes("POST", "/v1/chat/completions" if chat else "/v1/completions",
                                                json.dumps(body).encode()))
        obj = check_json_answer(*self.expect(raw, {400}, "bad %s=%r" % (key, value)))
        check(obj["error"].get("param") in (key, "messages", "prompt"), "param %r for %s" % (obj["error"].get("param"), key))

    def wrong_key(self):
        raw = exchange(self.port, request_bytes("GET", "/v1/models", key=self.rng.choice(["", "sk-wrong"])))
        check_json_answer(*self.expect(raw, {401}, "wrong key"))

    def unknown_route(self):
        raw = exchange(self.port, request_bytes("GET", "/v2/" + prompt_text(self.rng, 1, 1)))
        check_json_answer(*self.expect(raw, {404}, "unknown route"))

    def models(self):
        raw = exchange(self.port, request_bytes("GET", "/v1/models"))
        obj = check_json_answer(*self.expect(raw, {200}, "models"))
        check(obj["data"][0]["id"] == "starter", "model id")

    def oversized_header(self):
        pad = "x" * self.rng.randint(33 * 1024, 64 * 1024)
        raw = exchange(self.port, request_bytes("GET", "/health", extra=[("X-Pad", pad)]))
        check_json_answer(*self.expect(raw, {431}, "oversized header"))

    def oversized_body(self):
        head = ("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n"
                % self.rng.randint(8 * 1024 * 1024 + 1, 10 ** 12 - 1)).encode()
        raw = exchange(self.port, head + b"{" * 1000)
        check_json_answer(*self.expect(raw, {413}, "oversized body"))

    def random_bytes(self):
        data = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 300))) + b"\r\n\r\n"
        raw = exchange(self.port, data)
        check_json_answer(*self.expect(raw, {400, 403, 404, 405, 411, 413, 501, 505}, "random bytes %r" % data[:60]))

    def slowloris(self):
        body = json.dumps({"prompt": prompt_text(self.rng), "max_tokens": 3}).encode()
        data = request_bytes("POST", "/v1/completions", body)
        cut = self.rng.randint(1, len(data) - 1)
        give_up = self.rng.random() < 0.5
        s = connect(self.port, timeout=30)
        try:
            started = time.monotonic()
            for i in range(cut):  # a byte every 10-100 ms, never the whole request
                if select.select([s], [], [], 0)[0]:
                    break  # the server's deadline has answered
                s.sendall(data[i:i + 1])
                time.sleep(self.rng.uniform(0.01, 0.1))
                if give_up and time.monotonic() - started > 1.0:
                    return  # abandoned: the server must notice the close
            raw = read_all(s)  # the server's deadline answers 408 and closes
        except (BrokenPipeError, ConnectionResetError):
            raw = b""
        finally:
            s.close()
        if not raw:
            self.count("slowloris_reset")  # our byte crossed the server's close: the 408 was lost to the reset
            return
        check_json_answer(*self.expect(raw, {408}, "slowloris"))

    def burst(self):
        """More long requests at once than slots plus queue: some must be refused 503, none may fail otherwise."""
        results, errors = [], []

        def one(i):
            try:
                body = {"prompt": prompt_text(random.Random(i)), "max_tokens": 30, "temperature": 0}
                raw = exchange(self.port, request_bytes("POST", "/v1/completions", json.dumps(body).encode()))
                status, headers, payload = split_response(raw)
                check_json_answer(status, headers, payload)
                results.append(status)
            except Exception as e:  # reported by the caller
                errors.append(e)

        threads = [threading.Thread(target=one, args=(self.rng.randrange(1 << 30),)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        check(set(results) <= {200, 503}, "burst statuses %r" % results)
        for st in results:
            self.count("status_%d" % st)


# --- the server and its watchers -----------------------------------------------------------------------------------
REQUEST_TIMEOUT_S = 3.0


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def health(port, timeout):
    t = time.monotonic()
    raw = exchange_with_timeout(port, request_bytes("GET", "/health", key=""), timeout)
    ms = (time.monotonic() - t) * 1000
    status, headers, body = split_response(raw)
    check(status == 200, "/health answered %d" % status)
    return check_json_answer(status, headers, body), ms


def exchange_with_timeout(port, data, timeout):
    s = connect(port, timeout=timeout)
    try:
        s.sendall(data)
        return read_all(s)
    finally:
        s.close()


def main():
    cli, model = sys.argv[1], sys.argv[2]
    seconds = float(os.environ.get("WB_API_SOAK_SECONDS", "30"))
    seed = int(os.environ.get("WB_API_SOAK_SEED", str(int(time.time()) % 100000)))
    clients = int(os.environ.get("WB_API_SOAK_CLIENTS", "6"))
    health_bound_ms = float(os.environ.get("WB_API_SOAK_HEALTH_MS", "3000"))
    print("api soak: seed %d, %g s, %d clients (replay: WB_API_SOAK_SEED=%d)" % (seed, seconds, clients, seed),
          flush=True)
    log = tempfile.NamedTemporaryFile(prefix="api-soak-", suffix=".log", delete=False)
    server = subprocess.Popen([cli, "serve", "--model", model, "--port", "0", "--api-key", KEY, "--parallel", "3",
                               "--queue", "3", "--threads", "2", "--request-timeout", str(int(REQUEST_TIMEOUT_S * 1000))],
                              stdout=subprocess.PIPE, stderr=log, text=True)
    failures = []
    try:
        line = server.stdout.readline()
        check(line.startswith("serving "), "unexpected first line: %r" % line)
        port = int(re.search(r":(\d+) ", line).group(1))
        stats = {"lock": threading.Lock()}
        stop = threading.Event()
        deadline = time.monotonic() + seconds
        samples = []  # (time, rss KiB)
        worst_health = [0.0]

        def watch():
            try:
                while not stop.is_set():
                    check(server.poll() is None, "the server died (exit status %r)" % server.poll())
                    _, ms = health(port, timeout=health_bound_ms / 1000 + 5)
                    worst_health[0] = max(worst_health[0], ms)
                    check(ms <= health_bound_ms, "/health took %.0f ms (bound %g)" % (ms, health_bound_ms))
                    samples.append((time.monotonic(), rss_kib(server.pid)))
                    stop.wait(0.5)
            except Exception as e:
                failures.append(("health", e))
                stop.set()

        def walk(client):
            try:
                Walker(port, seed, client, deadline, stats, stop).run()
            except Exception as e:
                failures.append(("client %d" % client, e))
                stop.set()

        threads = [threading.Thread(target=walk, args=(i,)) for i in range(clients)]
        watcher = threading.Thread(target=watch)
        watcher.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        watcher.join()
        if failures:
            where, e = failures[0]
            raise Violation("%s: %s: %s" % (where, type(e).__name__, e))

        # Drained: no other connection, nothing running or queued.
        walk_end = time.monotonic()
        while True:
            h, _ = health(port, timeout=10)
            if h["connections"] == 0 and h["running"] == 0 and h["queued"] == 0:
                break
            check(time.monotonic() < walk_end + 15, "not drained 15 s after the walk: %r" % h)
            time.sleep(0.2)
        print("drained %.1f s after the last client" % (time.monotonic() - walk_end))
        check(server.poll() is None, "the server died")

        # Memory: the last third of the samples against the middle third (the first third is warm-up).
        rss = [kib for _, kib in samples]
        third = len(rss) // 3
        if third >= 3:
            mid = sorted(rss[third:2 * third])[third // 2]
            last = sorted(rss[2 * third:])[len(rss[2 * third:]) // 2]
            print("rss: start %d MiB, middle median %d MiB, last median %d MiB, peak %d MiB"
                  % (rss[0] // 1024, mid // 1024, last // 1024, max(rss) // 1024))
            check(last <= mid * 1.10 + 16 * 1024, "resident memory grows: %d -> %d KiB" % (mid, last))
        counts = {k: v for k, v in sorted(stats.items()) if k != "lock"}
        print("actions and statuses: %s" % json.dumps(counts))
        print("worst /health: %.0f ms over %d probes" % (worst_health[0], len(samples)))
        check(counts.get("status_200", 0) > 0, "no request succeeded")
    except Violation as e:
        print("api soak FAILED (seed %d): %s" % (seed, e), flush=True)
        failures.append(("main", e))
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                code = server.wait(timeout=20)
                if code != 0 and not failures:
                    print("api soak FAILED (seed %d): the server exited %d on SIGTERM" % (seed, code))
                    failures.append(("exit", code))
            except subprocess.TimeoutExpired:
                server.kill()
                print("api soak FAILED (seed %d): the server did not stop on SIGTERM" % seed)
                failures.append(("exit", "hang"))
        log.close()
        with open(log.name, "rb") as f:
            lines = f.read().splitlines()
        bad = [l for l in lines if l.strip() and not l.startswith(b"{")]
        for l in lines:
            if l.startswith(b"{"):
                try:
                    json.loads(l)
                except ValueError:
                    bad.append(l)
        if bad and not failures:
            print("api soak FAILED (seed %d): the server logged lines that are not JSON: %r" % (seed, bad[:3]))
            failures.append(("log", bad[0]))
        entries = []
        for l in lines:
            try:
                entries.append(json.loads(l))
            except ValueError:
                pass
        done = [e for e in entries if e.get("status") in (200, 499) and "completionTokens" in e]
        if done:
            ms = sorted(e["ms"] for e in done)
            print("server log: %d lines; %d generations (%d cut by their client), %d tokens, median %.0f ms, max %.0f ms"
                  % (len(lines), len(done), sum(e["status"] == 499 for e in done),
                     sum(e["completionTokens"] for e in done), ms[len(ms) // 2], ms[-1]))
        print("server log: %d lines (%s)" % (len(lines), log.name))
        if not failures:
            os.unlink(log.name)
    if failures:
        sys.exit(1)
    print("api soak: no violation")


if __name__ == "__main__":
    main()
