#!/usr/bin/env python3
"""Smoke test: the official Deepgram Python SDK's live client (PyPI `deepgram-sdk` 7.x,
`client.listen.v1.connect`) against `opsdeck sandbox`'s `/v1/listen` WebSocket.

Usage: deepgram_live_python.py [DEEPGRAM_BASE_URL [CONTROL_URL]]
       (default $OPSDECK_DEEPGRAM_URL, else http://127.0.0.1:7706; the control URL, when given,
       is used once to reset the Deepgram simulator to its seeded state before the checks)

The client's environment points its REST base and its `production` WebSocket base (the ws://
form of the same URL) at the sandbox, so no request leaves loopback. Each stream runs the SDK's
`start_listening()` in a thread, collects the messages through `on(EventType.MESSAGE, ...)`, and
ends with `send_close_stream()`; every wait is bounded.

- Speech the simulator made (`speak`, linear16 at 16 kHz in a WAV, about 6 s), streamed in 0.1 s
  frames at real time with interim_results and punctuate: interim results come before the finals
  of their stretch of audio and each is a prefix of the words that follow; the finals' transcripts
  joined are the spoken text (its words, and the punctuated text itself); the finals tile the
  audio; every message is the SDK's own type; a `Metadata` message comes last, with the audio's
  duration, one channel and the stream's request id; the socket closes with 1000.
- `Finalize` mid-stream: a final result with `from_finalize` that ends where the audio sent ends,
  or where the word it was in the middle of began.
- Raw `mulaw` at 8 kHz without a container, streamed with encoding and sample_rate: the text.
- A 440 Hz tone written here (2 s, then 1 s of silence) with vad_events: `SpeechStarted` at the
  tone's start, synthetic words (confidence 0.62, `metadata.warnings[0].type == "simulated"`) inside
  the tone, and an endpoint (`speech_final`) after it.
- A wrong key is refused at the handshake with HTTP 401.
- `KeepAlive` gets no reply and the socket stays usable (the text of a stream that follows it).
Prints one line per check and exits 1 at the first failure.
"""

import io
import math
import os
import struct
import sys
import threading
import time
import urllib.request
import wave

try:
    from deepgram import DeepgramClient, DeepgramClientEnvironment
    from deepgram.core.api_error import ApiError
    from deepgram.core.events import EventType
    from deepgram.listen.v1.types import ListenV1Metadata, ListenV1Results, ListenV1SpeechStarted
except ImportError as e:
    print(f"FAIL deepgram live python: cannot import deepgram: {e}", file=sys.stderr)
    sys.exit(1)

url = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_DEEPGRAM_URL", "http://127.0.0.1:7706")).rstrip("/")
control = sys.argv[2].rstrip("/") if len(sys.argv) > 2 and sys.argv[2] else None
KEY = os.environ.get("DEEPGRAM_SANDBOX_KEY", "sandbox-deepgram-key")
MODEL = "nova-3"
# How long a stream may take, after its CloseStream, to send its last messages and close.
CLOSE_WAIT_S = 15
checks = 0


def check(name, condition, detail=""):
    global checks
    if not condition:
        print(f"FAIL deepgram live python: {name} {detail}"[:2000], file=sys.stderr)
        sys.exit(1)
    checks += 1
    print(f"ok deepgram live python: {name}")


def client(key=KEY):
    ws = "ws" + url[len("http"):]
    env = DeepgramClientEnvironment(base=url, production=ws, agent=ws, agent_rest=url)
    return DeepgramClient(api_key=key, environment=env, timeout=30)


def dump(model):
    return model.model_dump() if hasattr(model, "model_dump") else model.dict()


def words_of(text):
    return ["".join(c for c in w.lower() if c.isalnum() or c == "'") for w in text.split() if any(c.isalnum() for c in w)]


def near(a, b, eps=0.011):
    return a is not None and b is not None and abs(a - b) <= eps


def data_offset(wav):
    """Where a WAV's samples start (after its `data` chunk's header)."""
    at = wav.find(b"data", 12)
    return at + 8 if at > 0 else 44


def tone_wav(seconds, silence, rate=16000):
    """A 440 Hz tone, then silence: mono 16-bit PCM written by the `wave` module."""
    samples = [int(8000 * math.sin(2 * math.pi * 440 * i / rate)) for i in range(int(seconds * rate))]
    samples += [0] * int(silence * rate)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(struct.pack(f"<{len(samples)}h", *samples))
    return buf.getvalue()


class Stream:
    """One live stream: the SDK's socket, its messages (the SDK's models, in order), the errors
    its listener emitted, and the close code."""

    def __init__(self, label, **options):
        self.label, self.options = label, options
        self.messages, self.errors, self.close_code = [], [], None

    def run(self, audio, frame, pace, after=None, before=None):
        """Sends `audio` in `frame`-byte frames `pace` s apart, then CloseStream, and waits for
        the close. `after` maps a frame's index to a call made with the socket once it is sent;
        `before` is called with the socket before any audio."""
        with dg.listen.v1.connect(model=MODEL, **self.options) as socket:
            socket.on(EventType.MESSAGE, self.messages.append)
            socket.on(EventType.ERROR, self.errors.append)
            listener = threading.Thread(target=socket.start_listening, daemon=True)
            listener.start()
            if before:
                before(socket)
            for n, at in enumerate(range(0, len(audio), frame)):
                socket.send_media(audio[at:at + frame])
                if after and n in after:
                    after[n](socket)
                time.sleep(pace)
            socket.send_close_stream()
            listener.join(CLOSE_WAIT_S)
            check(f"{self.label}: the socket closed within {CLOSE_WAIT_S}s of CloseStream", not listener.is_alive(),
                  f"messages so far: {[type(m).__name__ for m in self.messages]}")
            # The SDK's socket keeps the `websockets` connection it wraps; the close code is there.
            self.close_code = socket._websocket.close_code
        return self

    def results(self):
        return [m for m in self.messages if isinstance(m, ListenV1Results)]

    def finals(self):
        return [m for m in self.results() if m.is_final]

    def transcript(self):
        return " ".join(t for t in (r.channel.alternatives[0].transcript for r in self.finals()) if t)

    def ended_cleanly(self, seconds):
        """The common end of a stream: the SDK's models only, finals tiling the audio, Metadata
        last with the audio's duration, a 1000 close, no error."""
        check(f"{self.label}: every message is one of the SDK's types (Results, Metadata, SpeechStarted)",
              all(isinstance(m, (ListenV1Results, ListenV1Metadata, ListenV1SpeechStarted)) for m in self.messages)
              and not self.errors, f"{[type(m).__name__ for m in self.messages]} errors={self.errors!r}")
        finals = self.finals()
        tiled = bool(finals) and near(finals[0].start, 0.0) and all(
            near(b.start, a.start + a.duration) for a, b in zip(finals, finals[1:]))
        check(f"{self.label}: the finals tile the audio (each starts where the last ended, the last ends at {seconds:.2f}s)",
              tiled and near(finals[-1].start + finals[-1].duration, seconds),
              repr([(f.start, f.duration) for f in finals]))
        last = self.messages[-1] if self.messages else None
        request_ids = {r.metadata.request_id for r in self.results()}
        check(f"{self.label}: Metadata comes last, with the audio's duration, 1 channel and the stream's request id",
              isinstance(last, ListenV1Metadata) and near(last.duration, seconds) and last.channels == 1
              and last.transaction_key == "deprecated" and last.sha256 and request_ids == {last.request_id},
              f"{dump(last) if last is not None else None!r} request ids {request_ids}")
        check(f"{self.label}: the socket closed with 1000", self.close_code == 1000, repr(self.close_code))


if control:
    request = urllib.request.Request(f"{control}/reset?service=deepgram", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=10) as r:
        check("the control port reset the Deepgram simulator", r.status == 200 and "deepgram" in r.read().decode())

dg = client()


def speak(text, **options):
    return b"".join(dg.speak.v1.audio.generate(text=text, model="aura-2-thalia-en", **options))


# --- 1. speech at real time, interim results, punctuation ---------------------------------------
TEXT = "Hello from the opsdeck sandbox. The live stream reads it back."
wav = speak(TEXT, encoding="linear16", container="wav", sample_rate=16000)
with wave.open(io.BytesIO(wav)) as w:
    params = (w.getnchannels(), w.getsampwidth(), w.getframerate())
    seconds = w.getnframes() / w.getframerate()
check("speak linear16 at 16 kHz: a mono 16-bit WAV of a few seconds", wav[:4] == b"RIFF" and params == (1, 2, 16000)
      and 4 < seconds < 8, f"{params} {seconds:.2f}s")

# 0.1 s of 16-bit 16 kHz mono is 3200 bytes, sent every 0.1 s: real time.
live = Stream("speech at real time", interim_results="true", punctuate="true").run(wav, 3200, 0.1)
results = live.results()
interims = [r for r in results if not r.is_final]
check("interim results (is_final false) with words arrive, the first before any final",
      sum(1 for r in interims if r.channel.alternatives[0].words) >= 2 and results and not results[0].is_final,
      repr([(r.is_final, r.start, r.duration) for r in results]))
late = [(r.start, r.duration) for r in interims
        if not any(f.is_final and near(f.start, r.start) for f in live.messages[live.messages.index(r) + 1:])]
check("each interim arrives before the final of its stretch of audio", not late, repr(late))


def heard(rs):
    return [(w.word, w.start, w.end) for r in rs for w in r.channel.alternatives[0].words]


wrong = []
for r in interims:
    eventual = heard(f for f in live.finals() if f.start >= r.start - 0.001)
    said = heard([r])
    if eventual[:len(said)] != said:
        wrong.append((said, eventual))
check("each interim's words are a prefix of the words the finals then give", not wrong, repr(wrong[:2]))
transcript = live.transcript()
check("the finals' transcripts joined have the spoken words", words_of(transcript) == words_of(TEXT), repr(transcript))
check("the finals' transcripts joined are the punctuated text", transcript == TEXT, repr(transcript))
check("every final word lies inside its result and has its punctuated form", all(
    f.start - 0.001 <= w.start <= w.end <= f.start + f.duration + 0.001 and w.punctuated_word
    and words_of(w.punctuated_word) == [w.word]
    for f in live.finals() for w in f.channel.alternatives[0].words), repr([dump(f) for f in live.finals()])[:800])
check("Results name the model and channel 0 of 1", all(
    r.channel_index == [0, 1] and r.metadata.model_info.name == MODEL and r.metadata.model_uuid for r in results),
      repr(dump(results[0]))[:600])
live.ended_cleanly(seconds)

# --- 2. Finalize mid-stream -------------------------------------------------------------------
SHORT = "Hello from the opsdeck sandbox."
short_wav = speak(SHORT, encoding="linear16", container="wav", sample_rate=16000)
short_seconds = (len(short_wav) - data_offset(short_wav)) / 32000
FINALIZE_AFTER = 12  # frames 0..12: 1.3 s of bytes, less the WAV header
finalized = Stream("Finalize").run(short_wav, 3200, 0.02, after={FINALIZE_AFTER: lambda s: s.send_finalize()})
flushed = [r for r in finalized.results() if r.from_finalize]
sent = ((FINALIZE_AFTER + 1) * 3200 - data_offset(short_wav)) / 32000
# It covers the audio sent, up to the word being heard when one is (a word is never cut in two:
# it goes whole into the next result), and its words lie within it.
flush_end = flushed[0].start + flushed[0].duration if flushed else -1
check("Finalize mid-stream: one final result with from_finalize, ending where the audio sent ended or its word began",
      len(flushed) == 1 and flushed[0].is_final and sent - 0.8 < flush_end <= sent + 0.002
      and all(w.end <= flush_end + 0.002 for w in flushed[0].channel.alternatives[0].words),
      repr([(r.start, r.duration, r.is_final, r.from_finalize) for r in finalized.results()]) + f" sent {sent:.3f}s")
check("Finalize: the stream still reads the whole text", words_of(finalized.transcript()) == words_of(SHORT),
      repr(finalized.transcript()))
finalized.ended_cleanly(short_seconds)

# --- 3. raw mulaw at 8 kHz --------------------------------------------------------------------
mulaw = speak(SHORT, encoding="mulaw", container="none")
check("speak mulaw without a container: raw bytes, not a WAV", mulaw[:4] != b"RIFF" and len(mulaw) > 8000, len(mulaw))
# 0.1 s of 8 kHz mulaw is 800 bytes; sent at five times real time.
raw = Stream("raw mulaw", encoding="mulaw", sample_rate=8000).run(mulaw, 800, 0.02)
check("raw mulaw at 8 kHz, streamed with encoding and sample_rate, reads back the text",
      words_of(raw.transcript()) == words_of(SHORT), repr(raw.transcript()))
raw.ended_cleanly(len(mulaw) / 8000)

# --- 4. audio the simulator did not make, with vad_events ---------------------------------------
tone = tone_wav(2.0, 1.0)
vad = Stream("tone with vad_events", vad_events="true").run(tone, 3200, 0.02)
started = [m for m in vad.messages if isinstance(m, ListenV1SpeechStarted)]
worded = [r for r in vad.results() if r.channel.alternatives[0].words]
check("vad_events: SpeechStarted at the tone's start, before any words",
      len(started) == 1 and near(started[0].timestamp, 0.0, 0.05) and started[0].channel == [0, 1] and worded
      and vad.messages.index(started[0]) < vad.messages.index(worded[0]),
      repr([dump(m) for m in started]) + repr([type(m).__name__ for m in vad.messages]))
words = [w for r in worded for w in r.channel.alternatives[0].words]
check("a tone gets synthetic words inside it, confidence 0.62", words and all(
    w.confidence == 0.62 and 0 <= w.start < w.end <= 2.0 + 0.011 for w in words)
      and all(r.channel.alternatives[0].confidence == 0.62 for r in worded), repr([dump(w) for w in words])[:600])
warnings = [(dump(r.metadata).get("warnings") or [{}])[0] for r in worded]
check("synthetic words: Results' metadata.warnings[0].type is \"simulated\"",
      all(w.get("type") == "simulated" for w in warnings), repr(warnings)[:600])
check("the silence after the tone is an endpoint: a final with speech_final ending after the tone",
      any(f.speech_final and 2.0 <= f.start + f.duration <= 2.5 for f in vad.finals()),
      repr([(f.start, f.duration, f.speech_final) for f in vad.finals()]))
vad.ended_cleanly(3.0)

# --- 5. a wrong key -----------------------------------------------------------------------------
try:
    with client("not-a-key").listen.v1.connect(model=MODEL) as socket:
        refusal = "WRONG: the handshake succeeded"
except ApiError as e:
    refusal = e.status_code
except Exception as e:  # noqa: BLE001 - see below
    # deepgram-sdk 7 maps a refused handshake to ApiError only when `websockets` still has the
    # legacy InvalidStatusCode its sync client no longer raises (websockets >= 14 raises
    # InvalidStatus, which the SDK lets through): take the status from either.
    status = getattr(getattr(e, "response", None), "status_code", None)
    refusal = status if status is not None else f"WRONG {type(e).__name__}: {e}"
check("a wrong key is refused at the handshake with 401", refusal == 401, repr(refusal))

# --- 6. KeepAlive -------------------------------------------------------------------------------
kept = Stream("KeepAlive")
quiet = []


def keep_alive(socket):
    """A KeepAlive before any audio, then a second of waiting: nothing should come back."""
    socket.send_keep_alive()
    time.sleep(1.0)
    quiet.extend(kept.messages)


kept.run(short_wav, 3200, 0.02, before=keep_alive, after={5: lambda s: s.send_keep_alive()})
check("KeepAlive before any audio: no reply within 1 s", quiet == [], repr([dump(m) for m in quiet]))
check("KeepAlive: the socket stays usable (the stream after it reads back the text)",
      words_of(kept.transcript()) == words_of(SHORT), repr(kept.transcript()))
kept.ended_cleanly(short_seconds)

print(f"deepgram live python: {checks} checks passed")
