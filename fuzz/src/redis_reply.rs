//! The Redis reply framer of `ScriptPipe` (`ratekeeper-redis`'s
//! `src/frame.rs`, which `ScriptPipe::receive` feeds) on any bytes, fed as
//! a host feeds them.
//!
//! A pipe reads its replies from the network: whatever arrives, it must
//! answer every check it sent exactly once, hold no more than the reply it
//! is waiting for, and take bytes that are no reply for an error at once,
//! rather than wait (for a line end that may never come, while the bytes
//! pile up). The target is the pipe's host: it opens the pipe on a store
//! that never connects (`RedisStore::unconnected`), takes what the pipe
//! writes, queues checks with `check_many`, and feeds it the input's bytes
//! as reads, cut where the input says. For every input:
//!
//! * nothing panics; every check handed in is answered exactly once or
//!   handed back (the pipe was not open), and nothing else is answered;
//! * the answers, and what the pipe writes, do not depend on how the bytes
//!   are cut: reads as the input cuts them, each run of reads fed as one,
//!   and one byte at a time all give the same;
//! * after every read, the pipe is open exactly when a model of the
//!   protocol ([`Model`], written apart from the framer) says it should
//!   be: it closes at the first byte that cannot begin or continue a RESP2
//!   reply, at a reply that cannot fit in its limit, a reply to nothing
//!   sent, a reply redis-rs cannot parse, or an error in place of the
//!   set-up's `PONG`; it resends a script after each `NOSCRIPT` to an
//!   `EVALSHA`; and while open, it holds exactly the bytes of the reply not
//!   yet whole — never more than that reply's limit;
//! * no allocation made during a read is larger than 64 KiB (a script run
//!   sent again with its source) plus a fixed multiple of the bytes the
//!   pipe holds and is handed and of the checks waiting: none is sized
//!   from a length that a reply announces.
//!
//! The input is a small byte format (so that seeds can be written by
//! hand; see `corpus/redis_reply/`): a byte choosing the algorithm (`g`,
//! `t`, `f`, `w`, `l`: GCRA, the token bucket, the fixed window, the
//! sliding window counter, the sliding log), then operations: `r`, a
//! length byte and that many bytes, one read; `c`, a length byte `n` and
//! `n % 48` checks (one byte each: key `b % 4`, cost `b / 4`); `l`, the
//! connection lost; `e`, everything waiting times out. (Any byte is an
//! operation: its value modulo 4.) After `l`, `e`, or a read that closes
//! the pipe, the host opens a new connection, as Node's does.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper::{Decision, LimiterSpec};
use ratekeeper_redis::{Answered, Error, RedisLimiter, RedisStore, ScriptPipe, StoreOptions};
use redis::{ServerErrorKind, Value};

/// How much longer than the command it answers a reply may be: the pipe's
/// limit (`REPLY_ALLOWANCE` in `ratekeeper-redis`'s `src/pipe.rs`).
const REPLY_ALLOWANCE: usize = 64 << 10;

/// The algorithms whose checks a pipe sends, and the byte naming each.
const ALGORITHMS: [(u8, &str, LimiterSpec); 5] = [
    (b'g', "gcra", LimiterSpec::Gcra { max_burst: 4, count_per_period: 3, period_micros: 1_000_000 }),
    (b't', "token_bucket", LimiterSpec::TokenBucket { rate: 10.0, burst: 5 }),
    (b'f', "fixed_window", LimiterSpec::FixedWindow { limit: 5, window_micros: 1_000_000 }),
    (b'w', "sliding_window_counter", LimiterSpec::SlidingWindowCounter { limit: 5, window_micros: 1_000_000 }),
    (b'l', "sliding_log", LimiterSpec::SlidingLog { limit: 5, window_micros: 1_000_000 }),
];

/// What the host does.
#[derive(Debug, Clone)]
pub enum Op {
    /// `check_many` of these `(key, cost)`.
    Check(Vec<(u8, u64)>),
    /// One read from the connection. Reads in a row make one run, which
    /// the target also feeds whole and a byte at a time.
    Receive(Bytes),
    /// The connection closed (`lost`).
    Lost,
    /// Everything waiting timed out (`expire`, two hours on).
    Expire,
}

/// Bytes, shown as a byte string.
#[derive(Clone)]
pub struct Bytes(pub Vec<u8>);

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

/// An algorithm and what the host does.
#[derive(Debug)]
pub struct Input {
    algorithm: usize,
    ops: Vec<Op>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let named = u8::arbitrary(u)?;
        let algorithm =
            ALGORITHMS.iter().position(|(name, ..)| *name == named).unwrap_or(usize::from(named) % ALGORITHMS.len());
        let mut ops = Vec::new();
        while !u.is_empty() {
            let op = match u8::arbitrary(u)? % 4 {
                0 => Op::Lost,   // b'l'
                1 => Op::Expire, // b'e'
                2 => {
                    // b'r'
                    let n = usize::from(u8::arbitrary(u)?).min(u.len());
                    Op::Receive(Bytes(u.bytes(n)?.to_vec()))
                }
                _ => {
                    // b'c'. At most 47 checks: GCRA's batches of 32 and
                    // more already go as four script runs, and a check is
                    // one command each of the others.
                    let n = usize::from(u8::arbitrary(u)? % 48).min(u.len());
                    Op::Check(u.bytes(n)?.iter().map(|&b| (b % 4, u64::from(b / 4))).collect())
                }
            };
            ops.push(op);
        }
        Ok(Input { algorithm, ops })
    }
}

/// How the reads of a run reach the pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feed {
    /// As the input cuts them (the model is checked after each).
    AsRead,
    /// A run of reads as one.
    Whole,
    /// One byte at a time.
    ByteAtATime,
}

/// What a host saw of a pipe, to be the same however the bytes were cut.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Answers, checks handed back, and whether the pipe was open after
    /// each operation (after each run of reads).
    events: Vec<Event>,
    /// What the pipe wrote, but the script runs sent again after
    /// `NOSCRIPT` (which a failure later in the same read drops before they
    /// are written, while a host that reads less at a time has written
    /// them: the model checks those).
    writes: Vec<Vec<u8>>,
}

#[derive(Debug, PartialEq, Eq)]
enum Event {
    Answered(u64, String),
    HandedBack(u64),
    Open(bool),
}

/// Runs the input three ways and compares what the host saw.
pub fn run(input: Input) {
    check_the_allocator_watches();
    let as_read = drive(&input, Feed::AsRead);
    same(&as_read, &drive(&input, Feed::Whole), "each run of reads fed whole");
    same(&as_read, &drive(&input, Feed::ByteAtATime), "fed a byte at a time");
}

/// Panics, with the first difference, unless `other` is `as_read`.
fn same(as_read: &Outcome, other: &Outcome, how: &str) {
    let first = |a: &[Event], b: &[Event]| a.iter().zip(b).position(|(a, b)| a != b).unwrap_or(a.len().min(b.len()));
    let at = first(&as_read.events, &other.events);
    assert!(
        as_read.events == other.events,
        "the reads as cut and {how} differ at event {at}: {:?} and {:?}",
        as_read.events.get(at),
        other.events.get(at)
    );
    let at = as_read.writes.iter().zip(&other.writes).position(|(a, b)| a != b);
    assert!(
        as_read.writes == other.writes,
        "the reads as cut and {how} write differently: {} and {} writes, the first difference at {at:?}",
        as_read.writes.len(),
        other.writes.len()
    );
}

fn drive(input: &Input, feed: Feed) -> Outcome {
    let limiter = &limiters()[input.algorithm];
    let mut host = Host::new();
    let mut run: Vec<&[u8]> = Vec::new();
    for op in &input.ops {
        if let Op::Receive(bytes) = op {
            run.push(&bytes.0);
            continue;
        }
        host.feed(std::mem::take(&mut run), feed);
        match op {
            Op::Check(checks) => host.check(limiter, checks),
            Op::Lost => {
                let answered = host.pipe.lost();
                host.settle(answered);
            }
            Op::Expire => {
                let answered = host.pipe.expire(Instant::now() + Duration::from_secs(7200));
                host.settle(answered);
            }
            Op::Receive(_) => unreachable!(),
        }
        host.after_op();
    }
    host.feed(run, feed);
    // The connection goes: whatever still waits is answered now.
    let answered = host.pipe.lost();
    host.settle(answered);
    assert!(host.pipe.is_idle(), "checks wait after the connection was lost");
    assert!(host.outstanding.is_empty(), "checks never answered: {:?}", host.outstanding);
    Outcome { events: host.events, writes: host.writes }
}

/// The target as a pipe's host.
struct Host {
    pipe: ScriptPipe<u64>,
    /// Checks handed to the pipe and not answered yet.
    outstanding: HashSet<u64>,
    tokens: u64,
    events: Vec<Event>,
    writes: Vec<Vec<u8>>,
    model: Model,
}

impl Host {
    fn new() -> Self {
        let pipe = ScriptPipe::new(store()).expect("a plain TCP store has a pipe");
        let mut host = Host {
            pipe,
            outstanding: HashSet::new(),
            tokens: 0,
            events: Vec::new(),
            writes: Vec::new(),
            model: Model::default(),
        };
        host.reopen();
        assert!(host.pipe.is_open(), "a new pipe did not open");
        host
    }

    /// Opens a new connection if the pipe wants one, as Node's host does.
    fn reopen(&mut self) {
        if self.pipe.wants_connection() {
            self.pipe.connecting();
            self.pipe.opened();
            assert!(self.pipe.is_open());
            self.model = Model::default();
            self.drain();
        }
    }

    fn after_op(&mut self) {
        self.reopen();
        self.events.push(Event::Open(self.pipe.is_open()));
    }

    /// Takes what the pipe writes, as the host writes it.
    fn drain(&mut self) {
        loop {
            let bytes = self.pipe.take_output();
            if bytes.is_empty() {
                return;
            }
            if self.model.written(&bytes) != Command::Eval {
                self.writes.push(bytes);
            }
        }
    }

    fn settle(&mut self, answered: Answered<u64>) {
        for (token, answer) in answered {
            assert!(self.outstanding.remove(&token), "check {token} answered twice, or never handed in");
            self.events.push(Event::Answered(token, format!("{answer:?}")));
        }
    }

    fn check(&mut self, limiter: &RedisLimiter, checks: &[(u8, u64)]) {
        let requests: Vec<(Vec<u8>, u64, u64)> = checks
            .iter()
            .map(|&(key, cost)| {
                self.tokens += 1;
                (format!("k{key}").into_bytes(), cost, self.tokens)
            })
            .collect();
        let tokens: Vec<u64> = requests.iter().map(|r| r.2).collect();
        match self.pipe.check_many(limiter, requests) {
            Ok(answered) => {
                self.outstanding.extend(tokens);
                self.settle(answered);
            }
            Err(back) => {
                assert!(!self.pipe.is_open(), "an open pipe handed checks back");
                assert_eq!(back.iter().map(|r| r.2).collect::<Vec<_>>(), tokens, "not the checks handed in");
                self.events.extend(tokens.into_iter().map(Event::HandedBack));
            }
        }
        self.drain();
    }

    /// A run of reads, fed as `feed` says.
    fn feed(&mut self, run: Vec<&[u8]>, feed: Feed) {
        if run.is_empty() {
            return;
        }
        match feed {
            Feed::AsRead => {
                for bytes in run {
                    self.receive(bytes);
                    self.model.check(&self.pipe);
                }
            }
            Feed::Whole => {
                self.receive(&run.concat());
                self.model.check(&self.pipe);
            }
            Feed::ByteAtATime => {
                for byte in run.concat() {
                    self.receive(&[byte]);
                }
                self.model.check(&self.pipe);
            }
        }
        self.after_op();
    }

    /// One read, and what it may allocate.
    fn receive(&mut self, bytes: &[u8]) {
        let held = if self.pipe.is_open() { self.pipe.held().len() } else { 0 };
        let waiting = self.outstanding.len();
        let (answered, largest) = largest_allocation(|| self.pipe.receive(bytes));
        let most = (64 << 10)
            + (held + bytes.len()) * std::mem::size_of::<Value>()
            + waiting * 2 * std::mem::size_of::<(u64, std::result::Result<Decision, Error>)>();
        assert!(
            largest <= most,
            "an allocation of {largest} bytes in a read of {} bytes (holding {held}, {waiting} checks waiting)",
            bytes.len()
        );
        self.settle(answered);
        self.drain();
        self.model.received(bytes);
    }
}

/// The store every pipe of the target is made on: it never connects, never
/// times out within a run, and never counts as down (a retry interval of
/// zero), so that one run does not change the next.
fn store() -> &'static RedisStore {
    static STORE: OnceLock<RedisStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let options = StoreOptions {
            timeout: Duration::from_secs(3600),
            connect_timeout: Duration::from_secs(1),
            retry_interval: Duration::ZERO,
        };
        RedisStore::unconnected("redis://127.0.0.1:1/", options).expect("a store that never connects")
    })
}

/// One limiter per algorithm, without remembered refusals (which depend on
/// the time, and so could differ between the three runs).
fn limiters() -> &'static [RedisLimiter] {
    static LIMITERS: OnceLock<Vec<RedisLimiter>> = OnceLock::new();
    LIMITERS.get_or_init(|| {
        ALGORITHMS
            .iter()
            .map(|(_, name, spec)| {
                RedisLimiter::new(store(), name, *spec).expect("a valid limiter").remember_refusals(false)
            })
            .collect()
    })
}

/// What a command the pipe wrote is, for what its reply does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    /// The connection's set-up (`PING`: the target's store has no
    /// password and database 0).
    SetUp,
    /// A script run by its hash: `NOSCRIPT` sends it again as `EVAL`.
    EvalSha,
    /// A script run sent again with its source.
    Eval,
}

/// What the pipe should do with the bytes it was fed since its connection
/// opened, worked out apart from the framer: the reply `i` answers the
/// command `i` written (in order, including those sent again after
/// `NOSCRIPT`, which the pipe queues and writes at once), and may be at most
/// [`REPLY_ALLOWANCE`] longer than that command.
#[derive(Debug, Default)]
struct Model {
    stream: Vec<u8>,
    commands: Vec<(Command, usize)>,
    /// Where the first reply not yet whole starts, and its number.
    at: usize,
    replies: usize,
    /// `NOSCRIPT` answers to `EVALSHA` so far.
    noscripts: usize,
    /// Whether the pipe should have closed.
    failed: bool,
}

impl Model {
    fn written(&mut self, bytes: &[u8]) -> Command {
        let command = if self.commands.is_empty() {
            assert_eq!(bytes, b"*1\r\n$4\r\nPING\r\n", "the set-up of a store without password or database");
            Command::SetUp
        } else if bytes.windows(11).take(8).any(|w| w == b"$7\r\nEVALSHA") {
            Command::EvalSha
        } else if bytes.windows(8).take(8).any(|w| w == b"$4\r\nEVAL") {
            Command::Eval
        } else {
            panic!("a write that is no command of the pipe's: {:?}", bytes.escape_ascii().to_string())
        };
        self.commands.push((command, bytes.len()));
        command
    }

    fn received(&mut self, bytes: &[u8]) {
        self.stream.extend_from_slice(bytes);
    }

    /// Takes the replies now whole, up to the first failure.
    fn advance(&mut self) {
        while !self.failed && self.at < self.stream.len() {
            let Some(&(command, length)) = self.commands.get(self.replies) else {
                // A reply to nothing sent.
                self.failed = true;
                return;
            };
            let rest = &self.stream[self.at..];
            match recognise(rest, REPLY_ALLOWANCE + length) {
                Shape::Partial => return,
                Shape::Bad => self.failed = true,
                Shape::Whole(n) => {
                    match redis::parse_redis_value(&rest[..n]) {
                        Err(_) => self.failed = true,
                        Ok(Value::ServerError(_)) if command == Command::SetUp => self.failed = true,
                        Ok(Value::ServerError(e))
                            if command == Command::EvalSha && e.kind() == Some(ServerErrorKind::NoScript) =>
                        {
                            self.noscripts += 1
                        }
                        Ok(_) => {}
                    }
                    self.at += n;
                    self.replies += 1;
                }
            }
        }
    }

    /// The pipe is as the model says.
    fn check(&mut self, pipe: &ScriptPipe<u64>) {
        self.advance();
        let shown = || format!("{:?}", self.stream.escape_ascii().to_string());
        assert_eq!(pipe.is_open(), !self.failed, "open or closed, after receiving {}", shown());
        if self.failed {
            return;
        }
        let held = pipe.held();
        assert_eq!(held, &self.stream[self.at..], "what the pipe holds, after receiving {}", shown());
        if let Some(&(_, length)) = self.commands.get(self.replies) {
            assert!(held.len() <= REPLY_ALLOWANCE + length, "the pipe holds more than the reply's limit");
        }
        let resent = self.commands.iter().filter(|(c, _)| *c == Command::Eval).count();
        assert_eq!(resent, self.noscripts, "script runs sent again after NOSCRIPT, after receiving {}", shown());
    }
}

/// What the bytes at the start of a stream are.
#[derive(Debug, PartialEq, Eq)]
enum Shape {
    /// A whole reply of this many bytes, within its limit.
    Whole(usize),
    /// The start of a reply that can still be whole within its limit.
    Partial,
    /// Not the start of any reply within its limit.
    Bad,
}

/// Why a reply is not whole.
enum Stop {
    /// A byte that no RESP2 reply has there.
    Bad,
    /// The bytes end first; whole, it takes at least this many more (the
    /// line's end, what a header announces, `+\r\n` for each element still
    /// to come).
    Short(u64),
}

/// The RESP2 reply at the start of `bytes`, as Redis sends them: `+` and `-`
/// lines (any bytes up to the first `\r\n`), `:` with an integer of 64 bits
/// (digits after an optional `-`), `$` and `*` with `-1` or a count of
/// digits, a bulk string's bytes ended by `\r\n`.
fn recognise(bytes: &[u8], limit: usize) -> Shape {
    match reply(bytes, 0) {
        Ok(end) if end <= limit => Shape::Whole(end),
        Err(Stop::Short(more)) if (bytes.len() as u64).saturating_add(more) <= limit as u64 => Shape::Partial,
        _ => Shape::Bad,
    }
}

/// The end of the reply starting at `at`.
fn reply(bytes: &[u8], at: usize) -> std::result::Result<usize, Stop> {
    let Some(&kind) = bytes.get(at) else {
        return Err(Stop::Short(3));
    };
    let from = at + 1;
    match kind {
        b'+' | b'-' => match bytes[from..].windows(2).position(|w| w == b"\r\n") {
            Some(i) => Ok(from + i + 2),
            None if bytes.len() > from && bytes.ends_with(b"\r") => Err(Stop::Short(1)),
            None => Err(Stop::Short(2)),
        },
        b':' | b'$' | b'*' => header(bytes, kind, from),
        _ => Err(Stop::Bad),
    }
}

/// The end of a `:`, `$` or `*` reply whose number starts at `from`.
fn header(bytes: &[u8], kind: u8, from: usize) -> std::result::Result<usize, Stop> {
    let negative = bytes.get(from) == Some(&b'-');
    let digits_from = from + usize::from(negative);
    let digits_end =
        bytes[digits_from..].iter().position(|b| !b.is_ascii_digit()).map_or(bytes.len(), |i| digits_from + i);
    let digits = &bytes[digits_from..digits_end];
    let value = digits.iter().try_fold(0u64, |v, &d| v.checked_mul(10)?.checked_add(u64::from(d - b'0')));
    // An i64 (whose least is -2^63); `$` and `*` take no negative but -1.
    let most = if negative && kind == b':' { 1 << 63 } else { i64::MAX as u64 };
    let Some(value) = value.filter(|&v| v <= most) else {
        return Err(Stop::Bad);
    };
    if negative && kind != b':' && !b"1".starts_with(digits) {
        return Err(Stop::Bad);
    }
    let announced = match kind {
        b'$' if !negative && !digits.is_empty() => value + 2,
        b'*' if !negative => value.saturating_mul(3),
        _ => 0,
    };
    match bytes.get(digits_end) {
        None => return Err(Stop::Short(announced.saturating_add(if digits.is_empty() { 3 } else { 2 }))),
        Some(b'\r') if !digits.is_empty() => {}
        Some(_) => return Err(Stop::Bad),
    }
    match bytes.get(digits_end + 1) {
        None => return Err(Stop::Short(announced.saturating_add(1))),
        Some(b'\n') => {}
        Some(_) => return Err(Stop::Bad),
    }
    let line_end = digits_end + 2;
    match kind {
        b':' => Ok(line_end),
        _ if negative => Ok(line_end),
        b'$' => {
            let end = line_end + value as usize + 2;
            if bytes.len() > end - 2 && bytes[end - 2] != b'\r' || bytes.len() > end - 1 && bytes[end - 1] != b'\n' {
                return Err(Stop::Bad);
            }
            if bytes.len() >= end {
                Ok(end)
            } else {
                Err(Stop::Short((end - bytes.len()) as u64))
            }
        }
        _ => {
            let mut at = line_end;
            for done in 0..value {
                match reply(bytes, at) {
                    Ok(end) => at = end,
                    Err(Stop::Short(more)) => {
                        return Err(Stop::Short(more.saturating_add((value - done - 1).saturating_mul(3))))
                    }
                    Err(Stop::Bad) => return Err(Stop::Bad),
                }
            }
            Ok(at)
        }
    }
}

/// The global allocator of the `redis_reply` target (its `fuzz_targets/`
/// file installs it): the system's, noting the largest allocation the
/// calling thread makes inside [`largest_allocation`].
#[derive(Debug)]
pub struct Watching;

thread_local! {
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = WATCHING.try_with(|watching| {
        if watching.get() {
            LARGEST.with(|largest| largest.set(largest.get().max(size)));
        }
    });
}

// SAFETY: every call goes to the system allocator with the same arguments;
// noting a size touches only this thread's cells, and allocates nothing.
unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// What `f` returns, and the largest allocation this thread made in it.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|largest| largest.set(0));
    WATCHING.with(|watching| watching.set(true));
    let result = f();
    WATCHING.with(|watching| watching.set(false));
    (result, LARGEST.with(Cell::get))
}

/// The allocation bound is checked only if [`Watching`] is the allocator.
fn check_the_allocator_watches() {
    let (v, largest) = largest_allocation(|| std::hint::black_box(Vec::<u8>::with_capacity(1000)));
    drop(v);
    assert!(largest >= 1000, "the redis_reply target runs without its allocator (fuzz_targets/redis_reply.rs)");
}
