"""OpenAI's own Python client against `llm-workbench-cli serve` on the starter model.

Run by tests/api/test_openai_client.sh (which installs the pinned `openai` package into the build directory):
    python openai_client_check.py CLI MODEL
Starts the server on a free port with an API key, then checks with the real client what an application does:
listing models, a chat completion and the same one streamed (the same text, greedy), a legacy completion with
logprobs, n choices, seeds reproducing a sampled reply, stop strings, and the client's own exceptions for a wrong
key (401), a bad parameter (400) and an unknown route (404); 16 concurrent streams each ending with the text
the single request got. Exits non-zero on the first failure.
"""
import subprocess
import sys

import openai
from openai import OpenAI

cli, model = sys.argv[1], sys.argv[2]
server = subprocess.Popen([cli, "serve", "--model", model, "--port", "0", "--api-key", "sk-wb-test", "--parallel", "4",
                           "--threads", "2"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    line = server.stdout.readline()
    assert line.startswith("serving "), f"unexpected first line: {line!r}"
    base = line.split(" on ")[1].split(" ")[0] + "/v1"
    client = OpenAI(base_url=base, api_key="sk-wb-test", max_retries=0, timeout=120)

    ids = [m.id for m in client.models.list()]
    assert ids == ["starter"], ids

    question = [{"role": "user", "content": "What is 23 + 45?"}]
    reply = client.chat.completions.create(model="starter", messages=question, temperature=0, max_tokens=80)
    text = reply.choices[0].message.content
    assert reply.choices[0].message.role == "assistant"
    assert "68" in text, text  # the starter's worked sum ends "So 23 + 45 = 68."
    assert reply.usage.completion_tokens > 0 and reply.usage.prompt_tokens > 0

    streamed = ""
    chunks = 0
    for chunk in client.chat.completions.create(model="starter", messages=question, temperature=0, max_tokens=80,
                                                stream=True):
        chunks += 1
        if chunk.choices and chunk.choices[0].delta.content:
            streamed += chunk.choices[0].delta.content
    assert streamed == text, (streamed, text)
    assert chunks > 3, chunks

    comp = client.completions.create(model="starter", prompt="Mia is a", max_tokens=5, temperature=0, logprobs=2)
    lp = comp.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) and len(lp.tokens) >= 1
    assert all(p <= 0 for p in lp.token_logprobs)

    three = client.chat.completions.create(model="starter", messages=question, temperature=1.0, max_tokens=40, n=3,
                                           seed=7)
    assert [c.index for c in three.choices] == [0, 1, 2]
    again = client.chat.completions.create(model="starter", messages=question, temperature=1.0, max_tokens=40, n=3,
                                           seed=7)
    assert [c.message.content for c in three.choices] == [c.message.content for c in again.choices]

    stopped = client.chat.completions.create(model="starter", messages=question, temperature=0, max_tokens=80,
                                             stop=["Tens"])
    assert "Tens" not in stopped.choices[0].message.content and text.startswith(stopped.choices[0].message.content)

    # A bounded load: 16 concurrent streams (4 slots, the rest queued) each end with the single request's text.
    import threading
    results = [None] * 16

    def stream_one(i):
        out = ""
        for chunk in client.chat.completions.create(model="starter", messages=question, temperature=0,
                                                    max_tokens=80, stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                out += chunk.choices[0].delta.content
        results[i] = out

    threads = [threading.Thread(target=stream_one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == text for r in results), [r for r in results if r != text][:2]
    assert client.models.list().data[0].id == "starter"  # still up

    for call, exc in [
        (lambda: OpenAI(base_url=base, api_key="wrong", max_retries=0).models.list(), openai.AuthenticationError),
        (lambda: client.chat.completions.create(model="starter", messages=question, temperature=5),
         openai.BadRequestError),
    ]:
        try:
            call()
            raise AssertionError(f"expected {exc.__name__}")
        except exc:
            pass
    try:
        client.get("/nothing", cast_to=object)
        raise AssertionError("expected NotFoundError")
    except openai.NotFoundError:
        pass
    print("openai client checks: 10 passed, 0 failed")
finally:
    server.terminate()
    server.wait(timeout=30)
