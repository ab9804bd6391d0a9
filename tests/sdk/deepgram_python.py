#!/usr/bin/env python3
"""Smoke test: the official Deepgram Python SDK (PyPI `deepgram-sdk` 7.x) against `opsdeck sandbox`.

Usage: deepgram_python.py [DEEPGRAM_BASE_URL [CONTROL_URL]]
       (default $OPSDECK_DEEPGRAM_URL, else http://127.0.0.1:7706; the control URL, when given,
       is used once to reset the Deepgram simulator to its seeded state before the checks)

The client's environment points every REST base at the sandbox, so no request leaves loopback.
Management: projects list/get/update/delete (a deleted project's get is the SDK's 404 with
Deepgram's body), keys (created with comment, scopes and a time to live or an expiration date; the
secret shown once and never listed; the new key authenticates a client of its own; a member key is
refused the project's deletion; a deleted key is refused at once), members (remove one; the last
owner cannot go), balances, models (STT and TTS), usage over a date range with filters, including
a transcription made here. Listen: a WAV written here with the `wave` module (duration, channels and
sample rate read from it; diarize, punctuate, utterances, paragraphs and sentiment shaping the
answer), undecodable bytes (the SDK's 400 with Deepgram's body), a URL served on loopback by a
thread here, and a non-loopback URL (refused before any fetch). Speak: linear16/wav, mulaw and alaw
without a container, lengths in proportion, speak -> transcribe round trips, an invalid format.
Read: sentiment, topics, intents and summary of a paragraph; a non-English language refused. A wrong
key is 401. Prints one line per check and exits 1 at the first failure.
"""

import datetime as dt
import http.server
import io
import json
import math
import os
import struct
import sys
import threading
import urllib.request
import uuid
import wave

try:
    from deepgram import DeepgramClient, DeepgramClientEnvironment
    from deepgram.core.api_error import ApiError
    from deepgram.errors import BadRequestError
except ImportError as e:
    print(f"FAIL deepgram python: cannot import deepgram: {e}", file=sys.stderr)
    sys.exit(1)

url = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_DEEPGRAM_URL", "http://127.0.0.1:7706")).rstrip("/")
control = sys.argv[2].rstrip("/") if len(sys.argv) > 2 and sys.argv[2] else None
KEY = os.environ.get("DEEPGRAM_SANDBOX_KEY", "sandbox-deepgram-key")
RUN = uuid.uuid4().hex[:10]
checks = 0


def check(name, condition, detail=""):
    global checks
    if not condition:
        print(f"FAIL deepgram python: {name} {detail}"[:2000], file=sys.stderr)
        sys.exit(1)
    checks += 1
    print(f"ok deepgram python: {name}")


def client(key=KEY):
    ws = "ws" + url[len("http"):]
    env = DeepgramClientEnvironment(base=url, production=ws, agent=ws, agent_rest=url)
    return DeepgramClient(api_key=key, environment=env, timeout=30)


def refused(call):
    """The SDK's exception from `call` (an ApiError), or a string saying what happened instead."""
    try:
        answer = call()
    except ApiError as e:
        return e
    except Exception as e:  # noqa: BLE001 - reported as the wrong kind
        return f"WRONG {type(e).__name__}: {e}"
    return f"WRONG: no exception, got {answer!r}"[:600]


def api_error(name, e, status, **body):
    """`e` is the SDK's ApiError with HTTP `status`, a body carrying `body`'s fields, and the
    request id of the body in the `dg-request-id` header."""
    ok = isinstance(e, ApiError) and e.status_code == status and isinstance(e.body, dict)
    ok = ok and all(e.body.get(k) == v if not callable(v) else v(e.body.get(k)) for k, v in body.items())
    ok = ok and bool(e.body.get("request_id")) and (e.headers or {}).get("dg-request-id") == e.body.get("request_id")
    check(name, ok, f"got {e}"[:800])


def dump(model):
    return model.model_dump() if hasattr(model, "model_dump") else model.dict()


def wav_bytes(seconds, rate, channels):
    """A tone, written by the standard library's `wave` module."""
    frames = int(seconds * rate)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        samples = []
        for i in range(frames):
            v = int(8000 * math.sin(2 * math.pi * 440 * i / rate))
            samples.extend([v] * channels)
        w.writeframes(struct.pack(f"<{len(samples)}h", *samples))
    return buf.getvalue()


def words_of(text):
    return ["".join(c for c in w.lower() if c.isalnum() or c == "'") for w in text.split() if any(c.isalnum() for c in w)]


if control:
    request = urllib.request.Request(f"{control}/reset?service=deepgram", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=10) as r:
        check("the control port reset the Deepgram simulator", r.status == 200 and "deepgram" in r.read().decode())

dg = client()
today = dt.datetime.now(dt.timezone.utc).date()

# --- auth -------------------------------------------------------------------------------------
api_error("a wrong key is 401 INVALID_AUTH", refused(lambda: client("not-a-key").manage.v1.projects.list()), 401,
          err_code="INVALID_AUTH", err_msg="Invalid credentials.")

# --- projects ---------------------------------------------------------------------------------
projects = dg.manage.v1.projects.list().projects
check("projects.list", len(projects) >= 2 and all(p.project_id and p.name for p in projects), repr(projects))
pid, doomed = projects[0].project_id, projects[1].project_id
project = dg.manage.v1.projects.get(pid)
check("projects.get", project.project_id == pid and project.name == projects[0].name, repr(project))
new_name = f"sdk smoke {RUN}"
updated = dg.manage.v1.projects.update(pid, name=new_name)
check("projects.update answers a message", bool(updated.message), repr(updated))
check("projects.get shows the new name", dg.manage.v1.projects.get(pid).name == new_name)

# --- balances, models ---------------------------------------------------------------------------
balances = dg.manage.v1.projects.billing.balances.list(pid).balances
check("balances.list", len(balances) >= 1 and balances[0].balance_id and balances[0].amount > 0
      and balances[0].units == "USD", repr(balances))
balance = dg.manage.v1.projects.billing.balances.get(pid, balances[0].balance_id)
check("balances.get", balance.balance_id == balances[0].balance_id and balance.amount == balances[0].amount, repr(balance))

models = dg.manage.v1.models.list()
stt, tts = models.stt or [], models.tts or []
check("models.list has STT and TTS models", len(stt) > 0 and len(tts) > 0
      and any(m.canonical_name == "nova-3" for m in stt)
      and any(m.canonical_name == "aura-2-thalia-en" for m in tts), f"{len(stt)} stt, {len(tts)} tts")
nova = next(m for m in stt if m.canonical_name == "nova-3")
got = dg.manage.v1.models.get(nova.uuid_)
check("models.get of an STT model", got.uuid_ == nova.uuid_ and got.canonical_name == "nova-3", repr(got)[:400])
thalia = next(m for m in tts if m.canonical_name == "aura-2-thalia-en")
got = dg.manage.v1.models.get(thalia.uuid_)
check("models.get of a TTS model", got.uuid_ == thalia.uuid_ and got.canonical_name == "aura-2-thalia-en", repr(got)[:400])
scoped = dg.manage.v1.projects.models.list(pid)
check("projects.models.list", len(scoped.stt or []) == len(stt) and len(scoped.tts or []) == len(tts))

# --- members ------------------------------------------------------------------------------------
members = dg.manage.v1.projects.members.list(pid).members
owners = [m for m in members if "owner" in (m.scopes or [])]
plain = [m for m in members if (m.scopes or []) == ["member"]]
check("members.list", len(members) >= 3 and len(owners) == 1 and plain and all(m.email for m in members),
      repr(members)[:600])
removed = dg.manage.v1.projects.members.delete(pid, plain[-1].member_id)
check("members.delete answers a message", bool(removed.message), repr(removed))
left = dg.manage.v1.projects.members.list(pid).members
check("members.list no longer shows the removed member", len(left) == len(members) - 1
      and all(m.member_id != plain[-1].member_id for m in left))
e = refused(lambda: dg.manage.v1.projects.members.delete(pid, owners[0].member_id))
api_error("removing the last owner is refused (400)", e, 400, err_msg=lambda m: "last owner" in (m or ""))
check("the last owner is still a member",
      any(m.member_id == owners[0].member_id for m in dg.manage.v1.projects.members.list(pid).members))

# --- keys ---------------------------------------------------------------------------------------
created = dg.manage.v1.projects.keys.create(pid, request={
    "comment": f"sdk smoke {RUN}", "scopes": ["member"], "tags": ["sdk-smoke"], "time_to_live_in_seconds": 3600})
secret = created.key
check("keys.create returns the secret once, with comment and scopes",
      bool(secret) and created.api_key_id and created.comment == f"sdk smoke {RUN}" and created.scopes == ["member"],
      repr(created))
expires = created.expiration_date
check("keys.create: time_to_live_in_seconds sets the expiration date",
      expires is not None and 3500 < (expires - dt.datetime.now(dt.timezone.utc)).total_seconds() <= 3660, repr(expires))
until = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=30)).replace(microsecond=0)
dated = dg.manage.v1.projects.keys.create(pid, request={
    "comment": f"dated {RUN}", "scopes": ["admin"], "expiration_date": until.strftime("%Y-%m-%dT%H:%M:%SZ")})
check("keys.create with an expiration_date", dated.key and dated.expiration_date == until and dated.scopes == ["admin"],
      repr(dated))
listed = dg.manage.v1.projects.keys.list(pid)
items = listed.api_keys or []
mine = [i for i in items if i.api_key.api_key_id == created.api_key_id]
check("keys.list shows the new key", len(mine) == 1 and mine[0].api_key.comment == f"sdk smoke {RUN}"
      and mine[0].api_key.scopes == ["member"] and mine[0].member.member_id, repr(mine)[:600])
raw = json.dumps(dump(listed), default=str)
check("keys.list never shows a secret", secret not in raw and dated.key not in raw
      and all("key" not in dump(i.api_key) for i in items), raw[:400])
one = dg.manage.v1.projects.keys.get(pid, created.api_key_id)
check("keys.get shows the key without its secret",
      secret not in json.dumps(dump(one), default=str) and created.api_key_id in json.dumps(dump(one), default=str))

member_client = client(secret)
seen = member_client.manage.v1.projects.list().projects
check("the new key authenticates a client of its own (it sees its project only)",
      [p.project_id for p in seen] == [pid], repr(seen))
check("the member key reads its project", member_client.manage.v1.projects.get(pid).name == new_name)
api_error("a member key may not delete the project (401 INSUFFICIENT_PERMISSIONS)",
          refused(lambda: member_client.manage.v1.projects.delete(pid)), 401, err_code="INSUFFICIENT_PERMISSIONS")
api_error("a member key may not list the members (401 INSUFFICIENT_PERMISSIONS)",
          refused(lambda: member_client.manage.v1.projects.members.list(pid)), 401, err_code="INSUFFICIENT_PERMISSIONS")
api_error("a key cannot reach another project (404)",
          refused(lambda: member_client.manage.v1.projects.get(doomed)), 404, category="NOT_FOUND")
deleted = dg.manage.v1.projects.keys.delete(pid, created.api_key_id)
check("keys.delete answers a message", bool(deleted.message), repr(deleted))
api_error("the deleted key is refused at once (401)", refused(lambda: member_client.manage.v1.projects.list()), 401,
          err_code="INVALID_AUTH")
dg.manage.v1.projects.keys.delete(pid, dated.api_key_id)
check("keys.list no longer shows the deleted keys", all(
    i.api_key.api_key_id not in (created.api_key_id, dated.api_key_id) for i in dg.manage.v1.projects.keys.list(pid).api_keys))

# --- listen -------------------------------------------------------------------------------------
audio = wav_bytes(1.5, 16000, 2)
tag = f"sdk-smoke-{RUN}"
res = dg.listen.v1.media.transcribe_file(request=audio, model="nova-3", tag=tag)
meta = res.metadata
check("transcribe_file: duration and channels from the WAV", abs(meta.duration - 1.5) < 0.01 and meta.channels == 2
      and meta.request_id and meta.models and meta.model_info, repr(meta)[:600])
check("transcribe_file: sample_rate from the WAV (the simulator's extra metadata.sample_rate)", dump(res)["metadata"].get("sample_rate") == 16000,
      repr(dump(res)["metadata"])[:400])
alt = res.results.channels[0].alternatives[0]
check("transcribe_file: a transcript with timed words inside the audio", alt.words and isinstance(alt.transcript, str)
      and all(0 <= w.start <= w.end <= 1.5 + 1e-6 for w in alt.words), repr(alt)[:600])
check("transcribe_file without options: no speakers, paragraphs, utterances or sentiments",
      alt.paragraphs is None and res.results.utterances is None and res.results.sentiments is None
      and all(w.speaker is None and getattr(w, "punctuated_word", None) is None for w in alt.words))
check("transcribe_file: the tag is echoed", (meta.tags or []) == [tag], repr(meta.tags))

res = dg.listen.v1.media.transcribe_file(request=audio, model="nova-3", diarize=True, punctuate=True, utterances=True,
                                         paragraphs=True, sentiment=True)
alt = res.results.channels[0].alternatives[0]
check("diarize: every word has a speaker", all(w.speaker is not None for w in alt.words), repr(alt.words[:2]))
# `punctuated_word` is not declared on the SDK's word model: it comes as an extra field.
check("punctuate: punctuated words", all(getattr(w, "punctuated_word", None) for w in alt.words)
      and alt.transcript[:1].isupper(), alt.transcript)
check("utterances: results.utterances", res.results.utterances and all(
    u.transcript and u.words and u.start <= u.end for u in res.results.utterances), repr(res.results.utterances)[:400])
check("paragraphs: alternatives[0].paragraphs", alt.paragraphs and alt.paragraphs.paragraphs
      and alt.paragraphs.transcript.strip(), repr(alt.paragraphs)[:400])
check("sentiment: results.sentiments with an average", res.results.sentiments and res.results.sentiments.average
      and res.results.sentiments.average.sentiment in ("positive", "neutral", "negative"), repr(res.results.sentiments)[:400])

e = refused(lambda: dg.listen.v1.media.transcribe_file(request=b"this is not audio at all" * 10))
check("undecodable bytes: the SDK's BadRequestError", isinstance(e, BadRequestError), repr(e)[:400])
api_error("undecodable bytes: Deepgram's 400 body", e, 400,
          err_msg=lambda m: (m or "").startswith("failed to process audio"))


class Audio(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.send_header("Content-Type", "audio/wav")
        self.send_header("Content-Length", str(len(served)))
        self.end_headers()
        self.wfile.write(served)

    def log_message(self, *args):
        pass


served = wav_bytes(2.25, 8000, 1)
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Audio)
threading.Thread(target=server.serve_forever, daemon=True).start()
try:
    res = dg.listen.v1.media.transcribe_url(url=f"http://127.0.0.1:{server.server_address[1]}/call.wav", model="nova-3",
                                            punctuate=True)
    check("transcribe_url of a loopback URL: the served file's duration and channels",
          abs(res.metadata.duration - 2.25) < 0.01 and res.metadata.channels == 1
          and dump(res)["metadata"].get("sample_rate") == 8000, repr(res.metadata)[:400])
finally:
    server.shutdown()
e = refused(lambda: dg.listen.v1.media.transcribe_url(url="https://audio.invalid/call.wav"))
api_error("transcribe_url of a non-loopback URL: 400 REMOTE_CONTENT_ERROR", e, 400, err_code="REMOTE_CONTENT_ERROR")

# --- speak --------------------------------------------------------------------------------------
TEXT = "Hello from the opsdeck sandbox."


def speak(text=TEXT, **options):
    return b"".join(dg.speak.v1.audio.generate(text=text, model="aura-2-thalia-en", tag=tag, **options))


wav = speak(encoding="linear16", container="wav", sample_rate=8000)
with wave.open(io.BytesIO(wav)) as w:
    params = (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes())
check("speak linear16/wav: a WAV the wave module reads", wav[:4] == b"RIFF" and params[:3] == (1, 2, 8000)
      and params[3] > 8000, repr(params))
mulaw = speak(encoding="mulaw", container="none")
alaw = speak(encoding="alaw", container="none", sample_rate=8000)
check("speak mulaw and alaw without a container: one byte a sample, same length",
      len(mulaw) == len(alaw) == params[3] and mulaw[:4] != b"RIFF", f"{len(mulaw)} {len(alaw)} {params[3]}")
with dg.speak.v1.audio.with_raw_response.generate(text=TEXT, model="aura-2-thalia-en", encoding="mulaw",
                                                  container="none", tag=tag) as raw:
    headers, streamed = raw.headers, b"".join(raw.data)
check("speak through the raw response: Content-Type and the dg-* headers",
      headers.get("content-type") == "audio/mulaw;rate=8000" and headers.get("dg-char-count") == str(len(TEXT))
      and headers.get("dg-model-name") == "aura-2-thalia-en" and headers.get("dg-request-id")
      and len(streamed) == len(mulaw), repr(headers))
longer = speak(text=TEXT + " " + TEXT, encoding="mulaw", container="none")
ratio = (len(longer) - 0.67 * 8000) / (len(mulaw) - 0.67 * 8000)
check("speak: audio length in proportion to the text", 1.9 < ratio < 2.1, f"{len(mulaw)} -> {len(longer)}")

res = dg.listen.v1.media.transcribe_file(request=wav, model="nova-3")
check("speak -> transcribe (linear16/wav) gives back the text",
      words_of(res.results.channels[0].alternatives[0].transcript) == words_of(TEXT),
      res.results.channels[0].alternatives[0].transcript)
res = dg.listen.v1.media.transcribe_file(request=mulaw, model="nova-3", encoding="mulaw",
                                         request_options={"additional_query_parameters": {"sample_rate": 8000}})
check("speak -> transcribe (raw mulaw, encoding and sample_rate given) gives back the text",
      words_of(res.results.channels[0].alternatives[0].transcript) == words_of(TEXT),
      res.results.channels[0].alternatives[0].transcript)
e = refused(lambda: speak(encoding="linear16", sample_rate=44100))
check("speak of an unsupported format: the SDK's BadRequestError", isinstance(e, BadRequestError), repr(e)[:400])
api_error("speak of an unsupported format: 400 INVALID_QUERY_PARAMETER", e, 400, err_code="INVALID_QUERY_PARAMETER",
          err_msg=lambda m: (m or "").startswith("Unsupported audio format"))

# --- read ---------------------------------------------------------------------------------------
PARAGRAPH = ("Hi, thank you for calling the support line. My order arrived late and the box was damaged, which "
             "was really frustrating. I would like to get a replacement or a refund for the broken speaker. "
             "The agent was very helpful and promised to send a new one right away. Great service, thanks!")
read = dg.read.v1.text.analyze(request={"text": PARAGRAPH}, sentiment=True, topics=True, intents=True, summarize=True,
                               language="en")
body = dump(read)
results = body.get("results") or {}
check("read: sentiments with segments and an average", (results.get("sentiments") or {}).get("segments")
      and results["sentiments"]["average"]["sentiment"] in ("positive", "neutral", "negative"), repr(results)[:600])
check("read: topics", (results.get("topics") or {}).get("segments")
      and all(s.get("topics") for s in results["topics"]["segments"]), repr(results.get("topics"))[:400])
check("read: intents", (results.get("intents") or {}).get("segments") is not None, repr(results.get("intents"))[:400])
summary = results.get("summary") or {}
check("read: a summary", bool(summary.get("text") or ((summary.get("results") or {}).get("summary") or {}).get("text")),
      repr(summary)[:400])
metadata = body.get("metadata") or {}
check("read: metadata names the request and the models used", (metadata.get("request_id")
      or (metadata.get("metadata") or {}).get("request_id")) and "sentiment_info" in json.dumps(metadata), repr(metadata)[:400])
e = refused(lambda: dg.read.v1.text.analyze(request={"text": "Bonjour, merci."}, sentiment=True, language="fr"))
api_error("read in French is refused: 400 INVALID_QUERY_PARAMETER", e, 400, err_code="INVALID_QUERY_PARAMETER")

# --- usage --------------------------------------------------------------------------------------
# The SDK's UsageV1Response declares start, end and resolution; `results` is an extra field
# (api/deepgram.md §6.5), so it is read from the model's dump.
def usage(**filters):
    answer = dump(dg.manage.v1.projects.usage.get(pid, **filters))
    return answer, answer.get("results") or []


# The tagged requests of this run, whatever day it is in UTC when they were made.
around = {"start": (today - dt.timedelta(days=1)).isoformat(), "end": (today + dt.timedelta(days=1)).isoformat()}
past = {"start": (today - dt.timedelta(days=7)).isoformat(), "end": (today - dt.timedelta(days=1)).isoformat()}
answer, rows = usage(**around, tag=tag, endpoint="listen")
check("usage.get with a tag filter: the tagged transcription of this run", len(rows) == 1 and rows[0]["requests"] == 1
      and abs(rows[0]["hours"] * 3600 - 1.5) < 1, repr(answer)[:600])
answer, days = usage(**past)
check("usage.get over a past week: one result a day", len(days) == 7 and answer["start"] == past["start"]
      and answer["end"] == past["end"] and all(r["requests"] > 0 for r in days), repr(answer)[:600])
answer, diarized = usage(**past, endpoint="listen", diarize=True)
check("usage.get with endpoint and feature filters counts fewer requests",
      0 < sum(r["requests"] for r in diarized) < sum(r["requests"] for r in days), repr(answer)[:600])
answer, spoken = usage(**around, tag=tag, endpoint="speak")
check("usage.get endpoint=speak: this run's five tagged speak requests and their characters",
      sum(r["tts"]["requests"] for r in spoken) == 5 and sum(r["tts"]["characters"] for r in spoken) == 6 * len(TEXT) + 1,
      repr(answer)[:400])

# --- project deletion (last: it takes the project's keys with it) -------------------------------
gone = dg.manage.v1.projects.delete(doomed)
check("projects.delete answers a message", bool(gone.message), repr(gone))
api_error("projects.get of the deleted project: 404 with Deepgram's body",
          refused(lambda: dg.manage.v1.projects.get(doomed)), 404, category="NOT_FOUND",
          message=lambda m: "cannot be found" in (m or ""))
check("projects.list no longer shows it", all(p.project_id != doomed for p in dg.manage.v1.projects.list().projects))

print(f"deepgram python: {checks} checks passed")
