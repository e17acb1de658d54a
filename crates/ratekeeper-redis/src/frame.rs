//! [`Framer`]: the RESP2 replies cut out of the bytes a
//! [`ScriptPipe`](crate::ScriptPipe)'s host reads from the network.
//!
//! Nothing is assumed of those bytes (the peer may not be Redis at all, or
//! not be well), so the framer:
//!
//! * takes a byte that cannot begin or continue a RESP2 reply for an error
//!   at once, rather than when a line end comes (one may never come, while
//!   the bytes pile up);
//! * refuses a reply as soon as it cannot fit in its limit (what any
//!   answer to the command it answers takes): the least length it could
//!   still have — what has arrived, the end of the line being read, the
//!   bytes a `$` header announces, three bytes (`+\r\n`) for each element
//!   a `*` header announces — exceeds it. So it never holds more than one
//!   reply's limit, and nothing is buffered or allocated for the length a
//!   header announces;
//! * looks at each byte once: a reply that trickles in costs time linear
//!   in its length, not in the square of it;
//! * hands a reply to redis-rs's parser only once it is whole.
//!
//! The replies are Redis's RESP2, as this crate's commands get them: `+`
//! and `-` lines (any bytes up to the first `\r\n`), `:` with a 64-bit
//! integer (digits after an optional `-`), `$` and `*` with `-1` (nil) or
//! a count of digits, a bulk string's bytes followed by `\r\n`. No RESP3
//! (the pipe never sends `HELLO`).

use redis::Value;

use crate::error::Error;

/// The spare capacity the buffer keeps between reads (beyond it, the
/// allocation a large read made is given back).
const KEEP_CAPACITY: usize = 64 << 10;

/// Replies as they arrive (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Framer {
    /// Bytes received and not yet taken.
    buffer: Vec<u8>,
    /// Where the reply being framed starts: those before it were taken.
    start: usize,
    /// The next byte to look at.
    at: usize,
    /// What that byte belongs to.
    part: Part,
    /// The replies (array elements) announced and not yet begun, besides
    /// the one being read.
    left: u64,
}

/// Where a reply's framing is, at the next byte.
#[derive(Debug, Clone, Copy, Default)]
enum Part {
    /// A reply's first byte, its type (one more reply than `left`).
    #[default]
    Type,
    /// The text of a `+` or `-` line; `cr`: its last byte was `\r`.
    Text { cr: bool },
    /// The number of a `:`, `$` or `*` line: its digits so far (`digits`:
    /// whether any), and `cr` once `\r` ended them.
    Number { kind: u8, negative: bool, digits: bool, value: u64, cr: bool },
    /// A bulk string's bytes and their `\r\n`, up to `end`.
    Payload { end: usize },
}

impl Framer {
    /// Adds bytes read from the connection.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The bytes received and not yet taken as a whole reply.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn held(&self) -> &[u8] {
        &self.buffer[self.start..]
    }

    /// Forgets everything (a new connection).
    pub(crate) fn clear(&mut self) {
        *self = Framer::default();
    }

    /// The next whole reply, or `None` until it has all arrived. `limit`:
    /// the most bytes the reply may take, or `None` when no reply is
    /// expected (any byte is then an error). After an error, the bytes
    /// are no stream of replies any more: [`clear`](Self::clear) before the
    /// next connection.
    pub(crate) fn next(&mut self, limit: Option<usize>) -> Result<Option<Value>, Error> {
        match self.frame(limit)? {
            Some(end) => {
                let reply = &self.buffer[self.start..end];
                let value = redis::parse_redis_value(reply).map_err(|e| Error::Protocol(e.to_string()))?;
                self.start = end;
                self.left = 0;
                self.part = Part::Type;
                Ok(Some(value))
            }
            None => {
                self.compact();
                Ok(None)
            }
        }
    }

    /// Looks at the bytes not yet looked at: the end of the reply once it
    /// is whole.
    fn frame(&mut self, limit: Option<usize>) -> Result<Option<usize>, Error> {
        while self.at < self.buffer.len() {
            let Some(limit) = limit else {
                return Err(Error::Protocol("a reply to nothing sent".to_owned()));
            };
            if let Part::Payload { end } = self.part {
                // A bulk string's bytes are taken as they are; then `\r\n`.
                if self.at + 2 < end {
                    self.at = self.buffer.len().min(end - 2);
                    continue;
                }
                let due = if self.at + 2 == end { b'\r' } else { b'\n' };
                if self.buffer[self.at] != due {
                    return Err(bad(self.buffer[self.at], "after a bulk string, where \\r\\n was due"));
                }
                self.at += 1;
                if self.at == end && self.element_done() {
                    return Ok(Some(end));
                }
                continue;
            }
            let byte = self.buffer[self.at];
            self.at += 1;
            let whole = self.take(byte)?;
            // The least length the reply can have only grows as bytes
            // arrive, so checking it after each byte refuses a reply at the
            // first byte that makes it too long.
            let arrived = (self.at - self.start) as u64;
            let least = if whole { arrived } else { arrived.saturating_add(self.least_rest()) };
            if least > limit as u64 {
                return Err(Error::Protocol(format!(
                    "a reply longer than the {limit} bytes any answer to its command takes"
                )));
            }
            if whole {
                return Ok(Some(self.at));
            }
        }
        Ok(None)
    }

    /// Takes one byte (not a bulk string's): whether the reply is whole.
    fn take(&mut self, byte: u8) -> Result<bool, Error> {
        match &mut self.part {
            Part::Type => {
                self.part = match byte {
                    b'+' | b'-' => Part::Text { cr: false },
                    b':' | b'$' | b'*' => {
                        Part::Number { kind: byte, negative: false, digits: false, value: 0, cr: false }
                    }
                    _ => return Err(bad(byte, "where a reply begins (one of + - : $ *)")),
                };
            }
            Part::Text { cr } => {
                if *cr && byte == b'\n' {
                    return Ok(self.element_done());
                }
                *cr = byte == b'\r';
            }
            Part::Number { kind, negative, digits, value, cr } => match byte {
                b'\n' if *cr => {
                    let (kind, negative, value) = (*kind, *negative, *value);
                    match kind {
                        b'$' if !negative => {
                            // `value` is within the limit (checked as it grew).
                            self.part = Part::Payload { end: self.at + value as usize + 2 };
                        }
                        b'*' if !negative => {
                            self.left += value;
                            return Ok(self.element_done());
                        }
                        _ => return Ok(self.element_done()),
                    }
                }
                b'\r' if !*cr && *digits => *cr = true,
                b'-' if !*cr && !*digits && !*negative => *negative = true,
                b'0'..=b'9' if !*cr => {
                    // `$` and `*` take no negative but -1.
                    if *negative && *kind != b':' && (*digits || byte != b'1') {
                        return Err(bad(byte, "in a length, where only -1 may be negative"));
                    }
                    // An i64 (whose least is -2^63).
                    let most = if *negative { 1 << 63 } else { i64::MAX as u64 };
                    *value = value
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(u64::from(byte - b'0')))
                        .filter(|&v| v <= most)
                        .ok_or_else(|| bad(byte, "in a number, past 64 bits"))?;
                    *digits = true;
                }
                _ => return Err(bad(byte, "in a number")),
            },
            Part::Payload { .. } => unreachable!("a bulk string's bytes are taken in `frame`"),
        }
        Ok(false)
    }

    /// One reply (or array element) is whole: whether the reply is.
    fn element_done(&mut self) -> bool {
        self.part = Part::Type;
        if self.left == 0 {
            return true;
        }
        self.left -= 1;
        false
    }

    /// The least number of bytes the reply still takes (see the module
    /// docs): a lower bound of what any valid end of it adds.
    fn least_rest(&self) -> u64 {
        let part = match self.part {
            // `+\r\n`.
            Part::Type => 3,
            Part::Text { cr } => 2 - u64::from(cr),
            Part::Number { kind, negative, digits, value, cr } => {
                // A digit and `\r\n`, `\r\n`, or `\n`.
                let line = if cr {
                    1
                } else if digits {
                    2
                } else {
                    3
                };
                let announced = match kind {
                    b'$' if !negative && digits => value + 2,
                    b'*' if !negative => value.saturating_mul(3),
                    _ => 0,
                };
                line + announced
            }
            Part::Payload { end } => (end - self.at) as u64,
        };
        part.saturating_add(self.left.saturating_mul(3))
    }

    /// Drops the bytes of the replies taken, and gives back the spare
    /// capacity a large read left.
    fn compact(&mut self) {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.at -= self.start;
            if let Part::Payload { end } = &mut self.part {
                *end -= self.start;
            }
            self.start = 0;
        }
        if self.buffer.capacity() > 2 * KEEP_CAPACITY.max(self.buffer.len()) {
            self.buffer.shrink_to(KEEP_CAPACITY.max(self.buffer.len()));
        }
    }
}

fn bad(byte: u8, where_: &str) -> Error {
    Error::Protocol(format!("not a Redis reply: byte {:?} {where_}", char::from(byte)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `bytes` one at a time: the reply and the bytes it took, or the
    /// error and the byte it came at.
    fn trickle(bytes: &[u8], limit: usize) -> Result<(Value, usize), (Error, usize)> {
        let mut framer = Framer::default();
        for (n, byte) in bytes.iter().enumerate() {
            framer.push(&[*byte]);
            match framer.next(Some(limit)) {
                Ok(None) => {}
                Ok(Some(value)) => return Ok((value, n + 1)),
                Err(e) => return Err((e, n)),
            }
        }
        panic!("{:?} is not whole", bytes.escape_ascii().to_string());
    }

    #[test]
    fn a_reply_is_whole_only_when_all_its_parts_are_there() {
        let whole: &[&[u8]] = &[
            b"+OK\r\n",
            b":-12\r\n",
            b":-9223372036854775808\r\n",
            b"-NOSCRIPT no\r\n",
            b"-ERR a\rb\r\r\n",
            b"$3\r\na\r\n\r\n",
            b"$0\r\n\r\n",
            b"$-1\r\n",
            b"*-1\r\n",
            b"*0\r\n",
            b"*3\r\n:1\r\n*2\r\n$1\r\nx\r\n:2\r\n:3\r\n",
        ];
        for reply in whole {
            // A byte at a time: whole at its last byte, not before.
            let (value, took) = trickle(reply, 1000).unwrap();
            assert_eq!(took, reply.len(), "{reply:?}");
            assert_eq!(value, redis::parse_redis_value(reply).unwrap());
            // All at once, with the next reply behind it: that one stays.
            let mut framer = Framer::default();
            framer.push(reply);
            framer.push(b":9\r\n:1");
            assert_eq!(framer.next(Some(1000)).unwrap(), Some(value));
            assert_eq!(framer.next(Some(1000)).unwrap(), Some(Value::Int(9)));
            assert_eq!(framer.next(Some(1000)).unwrap(), None);
            assert_eq!(framer.held(), b":1");
        }
    }

    #[test]
    fn bytes_that_are_no_reply_are_an_error_at_the_first_that_cannot_belong() {
        // The bytes, and where the first that no reply has there is.
        let bad: &[(&[u8], usize)] = &[
            (b"hello\r\n", 0),
            (b"%1\r\n", 0),
            (b"HTTP/1.1 400 Bad Request\r\n", 0),
            (b"$x\r\n", 1),
            (b"*\r\n", 1),
            (b":1x", 2),
            (b": 1\r\n", 1),
            (b":-\r\n", 2),
            (b":1-", 2),
            (b":1\rx", 3),
            (b":9223372036854775808\r\n", 19),
            (b":-9223372036854775809\r\n", 20),
            (b"$-2\r\n", 2),
            (b"$-10\r\n", 3),
            (b"*-0\r\n", 2),
            (b"$1\r\n7XY", 5),
            (b"$1\r\n7\rY", 6),
            (b"*2\r\n:1\r\n#t\r\n", 8),
        ];
        for &(bytes, at) in bad {
            let (error, came) = trickle(bytes, 1000).unwrap_err();
            assert_eq!(came, at, "{:?}: {error}", bytes.escape_ascii().to_string());
            assert!(matches!(error, Error::Protocol(_)), "{error:?}");
            // All at once, the same.
            let mut framer = Framer::default();
            framer.push(bytes);
            assert_eq!(framer.next(Some(1000)).unwrap_err().to_string(), error.to_string());
        }
        // Whole, but not what redis-rs reads: an error too.
        assert!(trickle(b"-ERR \xff\r\n", 1000).is_err());
        assert!(trickle(&[b"*1\r\n".repeat(101), b":1\r\n".to_vec()].concat(), 1000).is_err());
    }

    #[test]
    fn a_reply_is_an_error_as_soon_as_it_cannot_fit_in_its_limit() {
        // The bytes, the limit, and the byte at which the reply cannot fit.
        let cases: &[(&[u8], usize, usize)] = &[
            // Lengths past anything a reply takes (once a panic: an
            // overflow), and what Redis's largest bulk would have buffered.
            (b"$9223372036854775807\r\n", 1000, 4),
            (b"$536870912\r\n", 1000, 4),
            (b"*4294967296\r\n", 1000, 3),
            (b"*9223372036854775807\r\n*9223372036854775807\r\n", 1000, 3),
            // Exactly the limit fits; one more byte does not.
            (b"$3\r\nabc\r\n", 9, usize::MAX),
            (b"$4\r\nabcd\r\n", 9, 1),
            (b"+abcd\r\n", 7, usize::MAX),
            (b"+abcde\r\n", 7, 5),
            (b"*3\r\n", 13, usize::MAX),
            (b"*3\r\n", 12, 1),
            // A `:` takes at least 4 bytes (`:0\r\n`).
            (b"*3\r\n:1\r\n+\r\n+\r\n", 13, 4),
        ];
        for &(bytes, limit, at) in cases {
            match trickle_some(bytes, limit) {
                Err((e, came)) => {
                    assert_eq!(came, at, "{:?} in {limit}: {e}", bytes.escape_ascii().to_string());
                    assert!(e.to_string().contains("a reply longer than"), "{e}");
                }
                Ok(()) => assert_eq!(at, usize::MAX, "{:?} fits in {limit}", bytes.escape_ascii().to_string()),
            }
        }
        // A line of 98 bytes fits in 100, with its `\r\n`; no more does.
        let mut framer = Framer::default();
        framer.push(b"+");
        framer.push(&[b'a'; 97]);
        assert_eq!(framer.next(Some(100)).unwrap(), None);
        assert_eq!(framer.held().len(), 98);
        framer.push(b"a");
        assert!(framer.next(Some(100)).is_err());
    }

    /// Like [`trickle`], for bytes that need not make a whole reply.
    fn trickle_some(bytes: &[u8], limit: usize) -> Result<(), (Error, usize)> {
        let mut framer = Framer::default();
        for (n, byte) in bytes.iter().enumerate() {
            framer.push(&[*byte]);
            framer.next(Some(limit)).map_err(|e| (e, n))?;
        }
        Ok(())
    }

    #[test]
    fn any_byte_when_no_reply_is_expected_is_an_error() {
        let mut framer = Framer::default();
        assert_eq!(framer.next(None).unwrap(), None);
        framer.push(b"+");
        assert_eq!(
            framer.next(None).unwrap_err().to_string(),
            Error::Protocol("a reply to nothing sent".into()).to_string()
        );
    }

    #[test]
    fn the_framer_keeps_only_the_reply_not_yet_whole() {
        let mut framer = Framer::default();
        let replies = b":1\r\n".repeat(100_000);
        framer.push(&replies);
        framer.push(b"$5\r\nab");
        for _ in 0..100_000 {
            assert_eq!(framer.next(Some(11)).unwrap(), Some(Value::Int(1)));
        }
        assert_eq!(framer.next(Some(11)).unwrap(), None);
        assert_eq!(framer.held(), b"$5\r\nab");
        assert!(framer.buffer.capacity() <= 2 * KEEP_CAPACITY, "{}", framer.buffer.capacity());
        framer.push(b"cde\r");
        assert_eq!(framer.next(Some(11)).unwrap(), None);
        framer.push(b"\n");
        assert_eq!(framer.next(Some(11)).unwrap(), Some(Value::BulkString(b"abcde".to_vec())));
        assert_eq!(framer.held(), b"");
    }
}
