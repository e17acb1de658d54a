//! The `ScriptPipe` of `ratekeeper-redis` on any bytes read as Redis's
//! replies (its framer: `src/frame.rs`), fed as a host feeds them, with
//! timeouts, late replies and lost connections between.
//!
//! A pipe reads its replies from the network: whatever arrives, it must
//! answer every check it sent exactly once, hold no more than the reply it
//! is waiting for, and take bytes that are no reply for an error at once,
//! rather than wait (for a line end that may never come, while the bytes
//! pile up). A script run past its timeout fails its own checks alone: its
//! reply is *late*, read and dropped when it comes, and until then the
//! pipe hands new checks back (see "Failures" in `pipe.rs`). The target is
//! the pipe's host: it opens the pipe on a store that never connects
//! (`RedisStore::unconnected`), takes what the pipe writes, queues checks
//! with `check_many`, fires the pipe's timer at its deadline, and feeds it
//! the input's bytes as reads, cut where the input says. For every input:
//!
//! * nothing panics; every check handed in is answered exactly once or
//!   handed back, nothing else is answered, and a closed pipe has nothing
//!   left to answer;
//! * the answers, and what the pipe writes, do not depend on how the bytes
//!   are cut: reads as the input cuts them, each run of reads fed as one,
//!   and one byte at a time all give the same;
//! * after every operation, the pipe is open exactly when a model of the
//!   protocol ([`Model`], written apart from the pipe and its framer) says
//!   it should be: it closes at the first byte that cannot begin or
//!   continue a RESP2 reply, at a reply that cannot fit in its limit, a
//!   reply to nothing sent, a reply redis-rs cannot parse, an error in
//!   place of the set-up's `PONG`, a set-up not answered in time, or a
//!   late reply still missing a timeout later; it resends a script after
//!   each `NOSCRIPT` to an `EVALSHA` whose checks still wait; and while
//!   open, it holds exactly the bytes of the reply not yet whole (a late
//!   one's too: framed, limited and refused as any other, then dropped),
//!   never more than that reply's limit, and waits for a reply exactly
//!   when the model has one due;
//! * the pipe's timer times out what the model says: at the pipe's
//!   deadline, the first script runs sent still waiting, whose checks —
//!   and no others — are answered `Error::Timeout` while the pipe stays
//!   open with their replies late; or, when what is due first is a set-up
//!   or a late reply, everything, and the pipe closes;
//! * `check_many` hands the checks back exactly when the pipe is closed, a
//!   reply is late, or the store is down; the store is down exactly when
//!   the model says (after a connection lost with a reply due, or a reply
//!   saying Redis cannot decide now, such as `LOADING`; up again at any
//!   other reply to a script, never down for a timeout); and the pipe asks
//!   for a new connection exactly when the model says;
//! * no allocation made during a read is larger than 64 KiB (a script run
//!   sent again with its source) plus a fixed multiple of the bytes the
//!   pipe holds and is handed and of the checks waiting: none is sized
//!   from a length that a reply announces.
//!
//! The three feeds of an input, and successive inputs, must not influence
//! each other through the store, or through real time. The store's
//! timeout is an hour, so that nothing times out but at the deadlines the
//! pipe gives; an unconnected store never probes the server after a
//! timeout (a probe would mark it down, in real time, whenever it ended);
//! and each feed starts with the store's down state and last answer
//! forgotten (`RedisStore::forget_outcomes`). Rather than a new store for
//! each feed: dropping one ends its connection's task on the runtime's
//! thread after the run, and libFuzzer, seeing fewer frees than
//! allocations, looks for a leak after every run — 2.4 ms more for each
//! input, where the whole of most inputs takes less.
//!
//! The input is a small byte format (so that seeds can be written by
//! hand; see `seeds/redis_reply.py`): a byte choosing the algorithm (`g`,
//! `t`, `f`, `w`, `l`: GCRA, the token bucket, the fixed window, the
//! sliding window counter, the sliding log) and the store's retry
//! interval (the letter in lower case: none, so the pipe reconnects as
//! soon as it closes and the store never counts as down; in capitals: an
//! hour, longer than any input runs, so a store once down stays down until
//! a reply marks it up, and a pipe once closed stays closed), then
//! operations: `r`, a length byte and that many bytes, one read; `c`, a
//! length byte `n` and `n % 48` checks (one byte each: key `b % 4`, cost
//! `b / 4`); `l`, the connection lost; `e`, the pipe's timer fires
//! (`expire` at its `deadline`). (Any byte is an operation: its value
//! modulo 4.) After each operation, the host opens a new connection if the
//! pipe wants one, as Node's does.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper::{Decision, LimiterSpec};
use ratekeeper_redis::{Answered, Error, RedisLimiter, RedisStore, ScriptPipe, StoreOptions};
use redis::{ServerError, ServerErrorKind, Value};

/// How much longer than the command it answers a reply may be: the pipe's
/// limit (`REPLY_ALLOWANCE` in `ratekeeper-redis`'s `src/pipe.rs`).
const REPLY_ALLOWANCE: usize = 64 << 10;

/// The store's timeout, and its retry interval when it has one: longer
/// than any input runs.
const AN_HOUR: Duration = Duration::from_secs(3600);

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
    /// The pipe's timer fires: `expire` at its `deadline`, if it has one.
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

/// The store's retry interval (the algorithm byte's case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// None: a closed pipe reconnects at once, and the store is never down.
    AtOnce,
    /// An hour, which no input outlasts: a closed pipe stays closed, and
    /// the store, once down, stays down until a reply marks it up.
    Never,
}

/// An algorithm, a store, and what the host does.
#[derive(Debug)]
pub struct Input {
    algorithm: usize,
    retry: Retry,
    ops: Vec<Op>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let named = u8::arbitrary(u)?;
        let algorithm = ALGORITHMS
            .iter()
            .position(|(name, ..)| *name == named.to_ascii_lowercase())
            .unwrap_or(usize::from(named) % ALGORITHMS.len());
        let retry = if named.is_ascii_uppercase() { Retry::Never } else { Retry::AtOnce };
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
        Ok(Input { algorithm, retry, ops })
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
    let (store, limiters) = store(input.retry);
    // Whatever the last run left the store (see the module docs).
    store.forget_outcomes();
    let limiter = &limiters[input.algorithm];
    let mut host = Host::new(store.clone(), input.retry);
    let mut run: Vec<&[u8]> = Vec::new();
    for op in &input.ops {
        if let Op::Receive(bytes) = op {
            run.push(&bytes.0);
            continue;
        }
        host.feed(std::mem::take(&mut run), feed);
        match op {
            Op::Check(checks) => host.check(limiter, checks),
            Op::Lost => host.lost(),
            Op::Expire => host.expire(),
            Op::Receive(_) => unreachable!(),
        }
        host.after_op();
    }
    host.feed(run, feed);
    // The connection goes: whatever still waits is answered now.
    host.lost();
    assert!(host.pipe.is_idle(), "checks wait after the connection was lost");
    Outcome { events: host.events, writes: host.writes }
}

/// The target as a pipe's host.
struct Host {
    pipe: ScriptPipe<u64>,
    store: RedisStore,
    /// Checks handed to the pipe and not answered yet, each with its
    /// batch (see [`Model`]).
    outstanding: HashMap<u64, u64>,
    tokens: u64,
    events: Vec<Event>,
    writes: Vec<Vec<u8>>,
    model: Model,
    /// When the host last had the pipe send something (see
    /// [`Host::next_instant`]).
    last_sent: Instant,
}

impl Host {
    fn new(store: RedisStore, retry: Retry) -> Self {
        let pipe = ScriptPipe::new(&store).expect("a plain TCP store has a pipe");
        let mut host = Host {
            pipe,
            store,
            outstanding: HashMap::new(),
            tokens: 0,
            events: Vec::new(),
            writes: Vec::new(),
            model: Model::new(retry),
            last_sent: Instant::now(),
        };
        host.reopen();
        assert!(host.pipe.is_open(), "a new pipe did not open");
        host
    }

    /// Opens a new connection if the pipe wants one, as Node's host does.
    fn reopen(&mut self) {
        let wanted = self.pipe.wants_connection();
        assert_eq!(wanted, self.model.reconnects(), "whether the pipe wants a connection ({})", self.model.state());
        if wanted {
            self.pipe.connecting();
            self.next_instant();
            self.pipe.opened();
            self.last_sent = Instant::now();
            assert!(self.pipe.is_open());
            self.model.connected();
            self.drain();
        }
    }

    /// Waits, if need be, for the clock to move on from the last time the
    /// pipe sent something. The pipe's deadlines are the instants its
    /// set-ups and batches of checks were sent plus the timeout, and the
    /// model orders them as they were sent: two batches sent on one tick
    /// of a coarse clock would time out together.
    fn next_instant(&self) {
        while Instant::now() <= self.last_sent {
            std::hint::spin_loop();
        }
    }

    /// Checks the pipe against the model, and opens a new connection if
    /// the pipe wants one.
    fn after_op(&mut self) {
        self.model.check(&self.pipe, &self.store);
        if !self.pipe.is_open() {
            assert!(self.outstanding.is_empty(), "a closed pipe left checks unanswered: {:?}", self.outstanding);
            self.reopen();
            self.model.check(&self.pipe, &self.store);
        }
        self.events.push(Event::Open(self.pipe.is_open()));
    }

    /// Takes what the pipe writes, as the host writes it: a write may hold
    /// several commands (a batch's script runs go a few to a write), each
    /// a command of the model's.
    fn drain(&mut self) {
        loop {
            let bytes = self.pipe.take_output();
            if bytes.is_empty() {
                return;
            }
            let mut all_evals = true;
            let mut at = 0;
            while at < bytes.len() {
                let end = reply(&bytes, at).unwrap_or_else(|_| {
                    panic!("a write that is no commands of the pipe's: {:?}", bytes.escape_ascii().to_string())
                });
                all_evals &= self.model.written(&bytes[at..end]) == Command::Eval;
                at = end;
            }
            if !all_evals {
                self.writes.push(bytes);
            }
        }
    }

    fn settle(&mut self, answered: Answered<u64>) {
        for (token, answer) in answered {
            assert!(self.outstanding.remove(&token).is_some(), "check {token} answered twice, or never handed in");
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
        // Not only a closed pipe hands checks back: an open one does too
        // while a reply is late or the store is down, so that they go by
        // the store's own connection rather than wait behind a slow reply.
        let hands_back = self.model.hands_back();
        self.next_instant();
        let taken = self.pipe.check_many(limiter, requests);
        self.last_sent = Instant::now();
        match taken {
            Ok(answered) => {
                assert!(!hands_back, "the pipe took checks while it should hand them back ({})", self.model.state());
                let batch = self.model.sending();
                self.outstanding.extend(tokens.into_iter().map(|token| (token, batch)));
                self.settle(answered);
            }
            Err(back) => {
                assert!(hands_back, "the pipe handed checks back while open, no reply late, the store up");
                assert_eq!(back.iter().map(|r| r.2).collect::<Vec<_>>(), tokens, "not the checks handed in");
                self.events.extend(tokens.into_iter().map(Event::HandedBack));
            }
        }
        self.drain();
    }

    /// The connection closed: every check waiting is answered.
    fn lost(&mut self) {
        let answered = self.pipe.lost();
        self.settle(answered);
        self.model.lost();
        assert!(self.outstanding.is_empty(), "checks left unanswered by a lost connection: {:?}", self.outstanding);
    }

    /// The pipe's timer fires: what times out is what the model says.
    fn expire(&mut self) {
        let deadline = self.pipe.deadline();
        let due = self.model.expire();
        let Some(deadline) = deadline else {
            assert_eq!(due, Due::Nothing, "the pipe has no deadline");
            return;
        };
        let answered = self.pipe.expire(deadline);
        let expected: HashSet<u64> = match due {
            Due::Nothing => panic!("a deadline while nothing is due ({})", self.model.state()),
            Due::Everything => self.outstanding.keys().copied().collect(),
            Due::Batch(batch) => self.outstanding.iter().filter(|(_, b)| **b == batch).map(|(t, _)| *t).collect(),
        };
        let timed_out: HashSet<u64> = answered.iter().map(|(token, _)| *token).collect();
        assert_eq!(timed_out, expected, "the checks timed out at the deadline (the model: {due:?})");
        for (token, answer) in &answered {
            assert!(matches!(answer, Err(Error::Timeout)), "check {token} timed out as {answer:?}");
        }
        self.settle(answered);
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
                    self.model.check(&self.pipe, &self.store);
                }
            }
            Feed::Whole => self.receive(&run.concat()),
            Feed::ByteAtATime => {
                for byte in run.concat() {
                    self.receive(&[byte]);
                }
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

/// The store of the pipes of inputs with `retry`, and its limiters, one per
/// algorithm. It never connects nor probes the server, and its timeout is
/// longer than any input runs: nothing times out but what the host
/// expires.
fn store(retry: Retry) -> &'static (RedisStore, Vec<RedisLimiter>) {
    static STORES: [OnceLock<(RedisStore, Vec<RedisLimiter>)>; 2] = [OnceLock::new(), OnceLock::new()];
    STORES[retry as usize].get_or_init(|| {
        let options = StoreOptions {
            timeout: AN_HOUR,
            connect_timeout: Duration::from_secs(1),
            retry_interval: match retry {
                Retry::AtOnce => Duration::ZERO,
                Retry::Never => AN_HOUR,
            },
            ..StoreOptions::default()
        };
        let store = RedisStore::unconnected("redis://127.0.0.1:1/", options).expect("a store that never connects");
        // Without remembered refusals, which depend on the time, and so
        // could differ between the three feeds.
        let limiters = ALGORITHMS
            .iter()
            .map(|(_, name, spec)| {
                RedisLimiter::new(&store, name, *spec).expect("a valid limiter").remember_refusals(false)
            })
            .collect();
        (store, limiters)
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

/// A command written on the connection.
#[derive(Debug)]
struct Sent {
    command: Command,
    /// Its length: its reply may take [`REPLY_ALLOWANCE`] more.
    length: usize,
    /// What it went out with (see [`Model`]); `None` for an `EVAL` until
    /// the model reaches the `NOSCRIPT` it answers.
    batch: Option<u64>,
    /// Whether its checks timed out: its reply is late.
    late: bool,
}

/// What the pipe's timer times out, by the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Due {
    /// Nothing waits.
    Nothing,
    /// The script runs of this batch: their checks.
    Batch(u64),
    /// A set-up or a late reply: the connection is silent, and closes.
    Everything,
}

/// What the pipe and its store should do with the bytes fed since the
/// connection opened and the host's calls, worked out apart from the pipe
/// and the framer:
///
/// * the reply `i` answers the command `i` written (in order, including
///   those sent again after `NOSCRIPT`, which the pipe queues and writes
///   at once), and may be at most [`REPLY_ALLOWANCE`] longer than that
///   command;
/// * what is sent goes in *batches* — a connection's set-up, the runs of
///   one `check_many`, and the runs sent again for them after `NOSCRIPT` —
///   numbered as sent. A batch's deadline is the store's timeout after it
///   was sent, and a late reply's a timeout more: the timeout being longer
///   than any input runs, the pipe's next deadline is that of the first
///   batch sent of those still waiting, or, when none waits but late
///   replies, of the first late one;
/// * the store is down (with a retry interval) after a connection lost
///   while a reply was due, or a reply to a script saying that Redis cannot
///   decide now; up at any other reply to a script, and at a set-up
///   refused for its credentials while a script waits (an answer of the
///   server's, by the store's rule); never down for a timeout (an
///   unconnected store does not probe).
#[derive(Debug)]
struct Model {
    retry: Retry,
    /// Whether the store counts as down.
    down: bool,
    /// Whether a set-up was refused for its credentials: closed for good.
    refused: bool,
    /// Connections opened so far.
    connections: usize,
    /// Batches numbered so far.
    batches: u64,
    /// Whether the connection is open.
    open: bool,
    /// The connection's bytes received.
    stream: Vec<u8>,
    /// The connection's commands written.
    commands: Vec<Sent>,
    /// Where the first reply not yet whole starts, and its number.
    at: usize,
    replies: usize,
    /// The `EVAL`s written whose `NOSCRIPT` the model has not reached yet.
    unmatched: VecDeque<usize>,
    /// `NOSCRIPT` answers to `EVALSHA`s not late so far.
    noscripts: usize,
}

impl Model {
    fn new(retry: Retry) -> Self {
        Model {
            retry,
            down: false,
            refused: false,
            connections: 0,
            batches: 0,
            open: false,
            stream: Vec::new(),
            commands: Vec::new(),
            at: 0,
            replies: 0,
            unmatched: VecDeque::new(),
            noscripts: 0,
        }
    }

    /// Whether a closed pipe should want a new connection: not when its
    /// set-up was refused for good, nor while the store is down or (with
    /// a retry interval) after it failed.
    fn reconnects(&self) -> bool {
        !self.open && !self.refused && !self.down && (self.retry == Retry::AtOnce || self.connections == 0)
    }

    /// A new connection: its set-up is the next batch.
    fn connected(&mut self) {
        self.connections += 1;
        self.open = true;
        self.stream.clear();
        self.commands.clear();
        self.at = 0;
        self.replies = 0;
        self.unmatched.clear();
        self.noscripts = 0;
        self.batches += 1;
    }

    /// A `check_many` the pipe took: its runs are the next batch.
    fn sending(&mut self) -> u64 {
        self.batches += 1;
        self.batches
    }

    /// What is written and waits for its reply.
    fn waiting(&self) -> &[Sent] {
        &self.commands[self.replies.min(self.commands.len())..]
    }

    /// What the model says of the pipe and its store, for a failure's
    /// message.
    fn state(&self) -> String {
        let due = self.waiting().len();
        let late = self.waiting().iter().filter(|sent| sent.late).count();
        format!(
            "the model: {}, {due} replies due ({late} late), the store {}{}",
            if self.open { "open" } else { "closed" },
            if self.down { "down" } else { "up" },
            if self.refused { ", the set-up refused" } else { "" }
        )
    }

    /// Whether `check_many` should hand checks back.
    fn hands_back(&self) -> bool {
        !self.open || self.down || self.waiting().iter().any(|sent| sent.late)
    }

    fn mark_down(&mut self) {
        if self.retry == Retry::Never {
            self.down = true;
        }
    }

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
        let batch = match command {
            Command::Eval => {
                self.unmatched.push_back(self.commands.len());
                None
            }
            Command::SetUp | Command::EvalSha => Some(self.batches),
        };
        self.commands.push(Sent { command, length: bytes.len(), batch, late: false });
        command
    }

    fn received(&mut self, bytes: &[u8]) {
        self.stream.extend_from_slice(bytes);
    }

    /// Takes the replies now whole, up to the first failure.
    fn advance(&mut self) {
        while self.open && self.at < self.stream.len() {
            let Some(sent) = self.commands.get(self.replies) else {
                // A reply to nothing sent.
                self.open = false;
                return;
            };
            let (command, late, batch) = (sent.command, sent.late, sent.batch);
            let rest = &self.stream[self.at..];
            let n = match recognise(rest, REPLY_ALLOWANCE + sent.length) {
                Shape::Partial => return,
                Shape::Bad => {
                    self.open = false;
                    return;
                }
                Shape::Whole(n) => n,
            };
            let value = redis::parse_redis_value(&rest[..n]);
            self.at += n;
            self.replies += 1;
            match (command, value) {
                (_, Err(_)) => self.open = false,
                (Command::SetUp, Ok(Value::ServerError(e))) => {
                    self.open = false;
                    if refuses_credentials(&e) {
                        self.refused = true;
                        // The pipe's failure notes the refusal, an answer,
                        // against the command after the set-up, if any.
                        if !self.waiting().is_empty() {
                            self.down = false;
                        }
                    }
                }
                (Command::SetUp, Ok(_)) => {}
                (Command::EvalSha, Ok(Value::ServerError(e)))
                    if !late && e.kind() == Some(ServerErrorKind::NoScript) =>
                {
                    // Not run: sent again, in its batch.
                    self.noscripts += 1;
                    if let Some(eval) = self.unmatched.pop_front() {
                        self.commands[eval].batch = batch;
                    }
                }
                (_, Ok(Value::ServerError(e))) if cannot_decide(&e) => self.mark_down(),
                (_, Ok(_)) => self.down = false,
            }
        }
    }

    /// The pipe's timer fires at its deadline (see the type's docs).
    fn expire(&mut self) -> Due {
        if !self.open {
            return Due::Nothing;
        }
        let due = |sent: &Sent| (sent.late, sent.batch.expect("an EVAL the model saw no NOSCRIPT for"));
        let Some(first) = self.waiting().iter().map(due).min() else {
            return Due::Nothing;
        };
        let silent = first.0 || self.waiting().iter().any(|sent| due(sent) == first && sent.command == Command::SetUp);
        if silent {
            self.open = false;
            return Due::Everything;
        }
        let replies = self.replies;
        for sent in self.commands[replies..].iter_mut().filter(|sent| due(sent) == first) {
            sent.late = true;
        }
        Due::Batch(first.1)
    }

    /// The connection closed (a lost connection marks the store down, as
    /// the store's own would, when a reply was due).
    fn lost(&mut self) {
        if self.open {
            if !self.waiting().is_empty() {
                self.mark_down();
            }
            self.open = false;
        }
    }

    /// The pipe and its store are as the model says.
    fn check(&mut self, pipe: &ScriptPipe<u64>, store: &RedisStore) {
        self.advance();
        let shown = || format!("{:?}", self.stream.escape_ascii().to_string());
        assert_eq!(store.is_down(), self.down, "the store down or up, after receiving {}", shown());
        assert_eq!(pipe.is_open(), self.open, "open or closed, after receiving {}", shown());
        if !self.open {
            return;
        }
        let held = pipe.held();
        assert_eq!(held, &self.stream[self.at..], "what the pipe holds, after receiving {}", shown());
        if let Some(sent) = self.commands.get(self.replies) {
            assert!(held.len() <= REPLY_ALLOWANCE + sent.length, "the pipe holds more than the reply's limit");
        }
        let resent = self.commands.iter().filter(|sent| sent.command == Command::Eval).count();
        assert_eq!(resent, self.noscripts, "script runs sent again after NOSCRIPT, after receiving {}", shown());
        let waiting = !self.waiting().is_empty();
        assert_eq!(!pipe.is_idle(), waiting, "whether the pipe waits for a reply, after receiving {}", shown());
        assert_eq!(pipe.deadline().is_some(), waiting, "whether the pipe has a deadline");
    }
}

/// Whether a set-up's error refuses the connection's credentials or
/// database for good (retrying cannot help), as Redis 6 and 7 word it.
fn refuses_credentials(error: &ServerError) -> bool {
    let details = error.details().unwrap_or_default().to_ascii_lowercase();
    matches!(error.code(), "WRONGPASS" | "NOAUTH" | "NOPERM")
        || error.code() == "ERR" && ["password", "db index", "auth"].iter().any(|word| details.contains(word))
}

/// Whether a reply says that Redis cannot decide now: loading, no
/// primary, a cluster redirecting or down, a read-only replica, out of
/// memory.
fn cannot_decide(error: &ServerError) -> bool {
    matches!(
        error.kind(),
        Some(
            ServerErrorKind::BusyLoading
                | ServerErrorKind::MasterDown
                | ServerErrorKind::TryAgain
                | ServerErrorKind::ClusterDown
                | ServerErrorKind::ReadOnly
                | ServerErrorKind::Moved
                | ServerErrorKind::Ask
        )
    ) || error.code() == "OOM"
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
