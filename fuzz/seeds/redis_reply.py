#!/usr/bin/env python3
"""Writes the hand-made seeds of the `redis_reply` fuzz target into
corpus/redis_reply/ (named by their SHA-1, as libFuzzer names inputs):

    python3 seeds/redis_reply.py corpus/redis_reply

The input format is in src/redis_reply.rs: an algorithm byte (in
capitals: the store has a retry interval, so it stays down once down, and
the pipe closed once closed), then `r` (a read: length, bytes), `c`
(checks: length, one byte each, key b % 4 and cost b / 4), `l`
(connection lost), `e` (the pipe's timer fires at its deadline: the first
batch sent times out, its reply late; or, when that is the set-up or a late
reply, the connection is silent and closes). The first reply of a
connection answers its set-up (`PING`). `cargo fuzz cmin` may drop some of
these (others cover their edges); they are kept beside what it keeps, as
the replies a pipe gets from Redis, cut across reads, late, and the
garbage it must refuse.
"""

import hashlib
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def r(*chunks: bytes) -> bytes:
    """Reads, one per chunk."""
    b = b""
    for chunk in chunks:
        assert len(chunk) < 256
        b += b"r" + bytes([len(chunk)]) + chunk
    return b


def c(*checks: tuple[int, int]) -> bytes:
    """One `check_many` of these (key, cost)."""
    assert len(checks) < 48
    return b"c" + bytes([len(checks)]) + bytes(k % 4 + 4 * cost for k, cost in checks)


def ints(*xs: int) -> bytes:
    return b"".join(b":%d\r\n" % x for x in xs)


def arr(*xs: int) -> bytes:
    """An array of integers: GCRA's leads, or a Decision."""
    return b"*%d\r\n" % len(xs) + ints(*xs)


PONG = r(b"+PONG\r\n")
DEC_OK = arr(1, 5, 4, 0, 0, 0, 1000000)
DEC_NO = arr(0, 5, 0, 250000, 1000000, 0, 1000000)
seeds = {
    # GCRA: one check (a lone lead), a batch (an array of leads), two runs.
    "gcra-one": b"g" + PONG + c((0, 1)) + r(b":0\r\n"),
    "gcra-batch": b"g" + PONG + c((0, 1), (1, 1), (2, 2)) + r(arr(0, 333334, -1000000)),
    "gcra-two-runs": b"g" + PONG + c(*[(i, 1) for i in range(20)]) + r(arr(*range(10)), arr(*range(10, 20))),
    "gcra-split": b"g"
    + r(b"+PO", b"NG\r", b"\n")
    + c((0, 1), (1, 1))
    + r(b"*", b"2\r\n:1", b"2\r", b"\n:-", b"3\r\n"),
    "gcra-noscript": b"g"
    + PONG
    + c((0, 1), (1, 2))
    + r(b"-NOSCRIPT No matching script. Please use EVAL.\r\n")
    + r(arr(5, 6)),
    "gcra-noscript-twice": b"g"
    + PONG
    + c((0, 1))
    + r(b"-NOSCRIPT No matching script.\r\n-NOSCRIPT still none\r\n"),
    "gcra-wrongtype": b"g"
    + PONG
    + c((3, 1))
    + r(b"-ERR user_script:87: ratekeeper: rk:{gcra:k3}:gcra does not hold a GCRA state\r\n"),
    "gcra-bulk-leads": b"g" + PONG + c((0, 1), (1, 1)) + r(b"*2\r\n$1\r\n7\r\n$2\r\n-8\r\n"),
    "gcra-loading": b"g"
    + PONG
    + c((0, 1))
    + r(b"-LOADING Redis is loading the dataset in memory\r\n")
    + c((0, 1))
    + r(b":0\r\n"),
    "gcra-lost": b"g"
    + PONG
    + c((0, 1), (1, 1))
    + r(b"*2\r\n:0")
    + b"l"
    + r(b"+PONG\r\n")
    + c((0, 1))
    + r(b":0\r\n"),
    # Timeouts: a run's checks fail alone, its reply is late (read and
    # dropped), and new checks are handed back until it has come.
    "late-reply": b"g" + PONG + c((0, 1)) + b"e" + r(b":0\r\n") + c((1, 1)) + r(b":5\r\n"),
    "late-handed-back": b"g" + PONG + c((0, 1)) + b"e" + c((1, 1)) + r(b":0") + c((2, 1)) + r(b"\r\n") + c((3, 1)),
    "late-behind": b"t" + PONG + c((0, 1)) + c((1, 1)) + b"e" + r(DEC_OK + DEC_NO[:5], DEC_NO[5:]),
    "late-decision-cut": b"w" + PONG + c((0, 1), (1, 1)) + b"e" + r(DEC_OK[:3], DEC_OK[3:] + DEC_NO[:12], DEC_NO[12:]),
    "late-error": b"g" + PONG + c((0, 1)) + b"e" + r(b"-ERR user_script:1: boom\r\n") + c((1, 1)) + r(b":0\r\n"),
    "late-noscript": b"g" + PONG + c((0, 1)) + b"e" + r(b"-NOSCRIPT No matching script.\r\n") + c((1, 1)),
    "noscript-then-late": b"g"
    + PONG
    + c((0, 1))
    + r(b"-NOSCRIPT No matching script.\r\n")
    + b"e"
    + r(b":0\r\n")
    + c((1, 1))
    + r(b":0\r\n"),
    "late-garbage": b"g" + PONG + c((0, 1)) + b"e" + r(b":0\r\nx"),
    "late-huge-bulk": b"g" + PONG + c((0, 1)) + b"e" + r(b"$536870912\r\n"),
    "late-to-nothing": b"g" + PONG + c((0, 1)) + b"e" + r(b":0\r\n:1\r\n"),
    "late-silent": b"g" + PONG + c((0, 1), (1, 1)) + b"e" + r(b"*2\r\n:0") + b"e" + PONG + c((2, 1)) + r(b":0\r\n"),
    "setup-silent": b"f" + c((0, 1)) + b"e" + PONG + c((1, 1)) + r(DEC_OK),
    # A store with a retry interval (capitals): down after Redis says it
    # cannot decide, or a connection lost, and then checks are handed back.
    "down-loading": b"G"
    + PONG
    + c((0, 1))
    + c((1, 1))
    + r(b"-LOADING Redis is loading the dataset in memory\r\n")
    + c((2, 1))
    + r(b":0\r\n")
    + c((3, 1))
    + r(b":0\r\n"),
    "down-late": b"T" + PONG + c((0, 1)) + b"e" + r(b"-MASTERDOWN Link with MASTER is down\r\n") + c((1, 1)),
    "down-oom": b"F" + PONG + c((0, 1), (1, 1)) + r(b"-OOM command not allowed\r\n") + c((2, 1)) + r(DEC_OK) + c((3, 1)),
    "down-lost": b"L" + PONG + c((0, 1)) + b"l" + c((1, 1)) + r(PONG[2:]),
    "closed-for-good": b"W" + PONG + c((0, 1)) + r(b"x") + c((1, 1)) + b"e",
    # One script run per check: the Decision's seven integers.
    "token-bucket": b"t" + PONG + c((0, 1), (1, 9)) + r(DEC_OK, DEC_NO),
    "fixed-window": b"f" + PONG + c((0, 1)) + r(DEC_OK[:9], DEC_OK[9:]),
    "sliding-window-counter": b"w" + PONG + c((2, 3)) + r(DEC_NO),
    "sliding-log": b"l" + PONG + c((1, 1), (1, 1)) + r(DEC_OK + DEC_NO),
    "sliding-log-short": b"l" + PONG + c((1, 1)) + r(arr(1, 5, 4)),
    "nil-replies": b"t" + PONG + c((0, 1), (1, 1), (2, 1)) + r(b"$-1\r\n*-1\r\n*0\r\n"),
    "nested": b"t" + PONG + c((0, 1)) + r(b"*2\r\n*2\r\n:1\r\n$3\r\nabc\r\n+OK\r\n"),
    # The set-up refused: for a while, or for good.
    "setup-busy": b"g" + r(b"-ERR max number of clients reached\r\n") + c((0, 1)) + r(b"+PONG\r\n"),
    "setup-refused": b"g"
    + r(b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
    + c((0, 1))
    + r(b":0\r\n"),
    # Bytes that are no reply, or more than the pipe asked for.
    "garbage-http": b"g" + r(b"HTTP/1.1 400 Bad Request\r\n"),
    "garbage-no-line-end": b"g" + PONG + c((0, 1)) + r(b"x"),
    "garbage-in-number": b"t" + PONG + c((0, 1)) + r(b"*7\r\n:1x"),
    "garbage-bulk-end": b"g" + PONG + c((0, 1)) + r(b"$1\r\n7XY"),
    "garbage-resp3": b"g" + PONG + c((0, 1)) + r(b"%1\r\n+a\r\n:1\r\n"),
    "not-utf8": b"g" + PONG + c((0, 1)) + r(b"-ERR \xff\xfe\r\n"),
    "reply-to-nothing": b"g" + PONG + r(b"+PONG\r\n"),
    "reply-to-nothing-partial": b"g" + PONG + r(b"+"),
    "negative-lengths": b"g" + PONG + c((0, 1), (1, 1)) + r(b"$-2\r\n*-7\r\n"),
    # Lengths past anything a reply to the pipe's commands takes.
    "huge-bulk": b"g" + PONG + c((0, 1)) + r(b"$536870912\r\n"),
    "huge-bulk-max": b"g" + PONG + c((0, 1)) + r(b"$9223372036854775807\r\n"),
    "huge-bulk-overflow": b"g" + PONG + c((0, 1)) + r(b"$92233720368547758070\r\n"),
    "huge-array": b"g" + PONG + c((0, 1)) + r(b"*4294967296\r\n"),
    "huge-nested-arrays": b"g" + PONG + c((0, 1)) + r(b"*9223372036854775807\r\n*9223372036854775807\r\n"),
    "huge-array-trickled": b"g" + PONG + c((0, 1)) + r(b"*100000\r\n", b":1\r\n:2\r\n", b":3\r\n"),
    "long-bulk-within": b"g" + PONG + c((0, 1)) + r(b"$60000\r\n", b"x" * 200),
    "huge-integer": b"g"
    + PONG
    + c((0, 1))
    + r(b":-9223372036854775808\r\n")
    + c((0, 1))
    + r(b":9223372036854775808\r\n"),
    "deep": b"g" + PONG + c((0, 1)) + r(b"*1\r\n" * 60, b"*1\r\n" * 50 + b":1\r\n"),
}
for name, data in seeds.items():
    h = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, h), "wb") as f:
        f.write(data)
    print(h, name)
