//! [`ScriptPipe`]: exact-mode checks on a connection that the caller drives.
//!
//! Every other call of this crate talks to Redis from the crate's own
//! runtime thread. A host with an event loop of its own (Node) then pays two
//! thread hand-offs per batch of checks: the checks go to that thread, and
//! the answers come back. With many checks in flight, those hand-offs, not
//! Redis, bound the decisions per second (see benches/redis/node). A
//! `ScriptPipe` lets the host do the socket I/O on its own thread instead.
//! It does no I/O and has no thread ("sans I/O"): it says what to write,
//! reads what the host received, and makes the decisions
//! [`RedisLimiter::check_many_async`] would — the same scripts (GCRA's
//! checks of a batch in one run), remembered refusals, and unavailability
//! policy.
//!
//! The host:
//! 1. calls [`connecting`](ScriptPipe::connecting) and opens a TCP
//!    connection to [`address`](ScriptPipe::address) when
//!    [`wants_connection`](ScriptPipe::wants_connection) says so — a TLS
//!    one, with the settings [`tls`](ScriptPipe::tls) gives, when the store
//!    speaks TLS — and calls [`opened`](ScriptPipe::opened) once it is
//!    connected (over TLS: once the handshake is done);
//! 2. hands checks to [`check_many`](ScriptPipe::check_many) (which gives
//!    them back, for the limiter's own calls, unless the pipe is ready);
//! 3. writes what [`take_output`](ScriptPipe::take_output) gives, one
//!    write per call, until it gives nothing;
//! 4. feeds what it reads to [`receive`](ScriptPipe::receive);
//! 5. calls [`expire`](ScriptPipe::expire) by the
//!    [`deadline`](ScriptPipe::deadline), and [`lost`](ScriptPipe::lost)
//!    when the connection closes or fails to open;
//! 6. closes the connection whenever [`is_open`](ScriptPipe::is_open) has
//!    turned false.
//!
//! Every call returns the checks it answered, each with the token the host
//! gave it (in Node, the way back to its Promise).
//!
//! ## Pipelining
//!
//! A batch of checks goes as up to four writes of at least eight checks
//! each. A write is one GCRA script run (at most 128 checks, so a batch of
//! more than 512 has more runs per write) or, for the other algorithms,
//! which run one check per script, that many script runs. Redis starts on
//! the first write while the rest are still being written, and answers it
//! on its own, so the host settles those checks — and sends the checks
//! they lead to — while Redis runs the rest: the host and Redis work at the
//! same time instead of in turns, for a little more of Redis's time per
//! decision (each run's fixed cost); the figures are in BENCHMARKS.md,
//! "Redis from Node.js" (earlier measurements,
//! `benches/earlier/redis-node.md`). A write per script run instead (each
//! a system call, and for Redis a read of its own) cost an HTTP server
//! through Redis more of its own time and of Redis's per request than the
//! middleware's whole work (`benches/http/node`).
//!
//! ## Failures
//!
//! Every script run has the store's timeout, counted from the
//! [`check_many`](ScriptPipe::check_many) that sent it. Past it, its checks
//! fail (through their limiters' unavailability policy) — those checks
//! alone: the run's reply is *late*, and the pipe waits for it up to one
//! more timeout, reading it and dropping it when it comes, so that the runs
//! written after it, whose replies follow it, still get their answers
//! within their own timeouts. Meanwhile new checks go by the store's own
//! connection rather than queue behind the late reply. A reply still not
//! there a timeout late (or a set-up not answered within the timeout) means
//! the connection is silent: the pipe closes, failing what waits on it.
//! Whether the store counts as down after a timeout is the store's rule
//! (see "When Redis counts as down" in `store.rs`): not for one slow run
//! while the server answers. A lost connection fails every check still
//! waiting, and marks the store down for its retry interval, as the store's
//! own connection does — but a TLS handshake that fails on a certificate
//! (the host calls [`tls_failed`](ScriptPipe::tls_failed)) fails them with
//! [`Error::Tls`] and leaves the store up: the server is there, and would
//! refuse the same certificate again.
//!
//! Checks are never sent again: a script that may have run must not run
//! twice. The one exception is `NOSCRIPT` (the server's script cache was
//! flushed, or another server took over): that script did not run, so it
//! is sent again as `EVAL` with its source, which loads it for the next
//! ones — within the timeout it already had.
//!
//! Failures of the pipe's own connection leave the store alone: a
//! connection that cannot be opened within the store's `connect_timeout`,
//! a set-up the server turns down for another reason than credentials
//! (`-ERR max number of clients reached`, which a server sends in place of
//! the first reply), or bytes that are no Redis reply (from the first
//! byte that cannot belong to one, a reply longer than any answer to its
//! command, or any byte when no reply is due: see `frame.rs`) close the
//! pipe and keep it closed for the store's retry interval, while the
//! store's own connection serves every check. Only a set-up refused for its
//! credentials or database (`WRONGPASS`, `NOAUTH`, `NOPERM`, an invalid
//! DB) closes it for good.

use std::collections::VecDeque;
use std::time::Instant;

use ratekeeper::{Clock, Decision};
use redis::Value;

use crate::error::Error;
use crate::exact::{leads, RedisLimiter};
use crate::frame::Framer;
use crate::store::RedisStore;

/// A batch of checks goes as at most this many writes…
const WRITES_PER_BATCH: usize = 4;
/// …of at least this many checks each (see "Pipelining" in the module docs).
const MIN_CHECKS_PER_WRITE: usize = 8;

/// How much longer than the command it answers a reply may be; a longer
/// one is no reply of Redis's (see `frame.rs`). A script run's reply is
/// at most GCRA's 128 leads (3 KiB), and an error repeats at most the
/// keys and arguments of its command (`... does not hold a GCRA state`
/// names the key), which its command's own length covers.
const REPLY_ALLOWANCE: usize = 64 << 10;

/// Checks answered, each with its token.
pub type Answered<T> = Vec<(T, Result<Decision, Error>)>;

/// Checks asked for: each one's key, cost and token.
pub type Requests<T> = Vec<(Vec<u8>, u64, T)>;

/// What a host needs to open the pipe's connection with TLS as the
/// store's own connections do: their settings, with the PEM files read.
#[derive(Clone, PartialEq, Eq)]
pub struct PipeTls {
    /// The certificates to trust (PEM); `None`: the system's roots (the
    /// host's own list of them).
    pub ca: Option<Vec<u8>>,
    /// The client's certificate chain (PEM), for mutual TLS.
    pub client_cert: Option<Vec<u8>>,
    /// Its private key (PEM).
    pub client_key: Option<Vec<u8>>,
    /// The name the server's certificate must carry (and SNI sends, unless
    /// it is an IP address).
    pub server_name: String,
    /// Whether to verify the server's certificate at all (`false`:
    /// [`TlsOptions::insecure_skip_verify`](crate::TlsOptions::insecure_skip_verify)).
    pub verify: bool,
}

impl std::fmt::Debug for PipeTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let length = |pem: &Option<Vec<u8>>| pem.as_ref().map(Vec::len);
        f.debug_struct("PipeTls")
            .field("ca_bytes", &length(&self.ca))
            .field("client_cert_bytes", &length(&self.client_cert))
            .field("client_key", &self.client_key.as_ref().map(|_| "<redacted>"))
            .field("server_name", &self.server_name)
            .field("verify", &self.verify)
            .finish()
    }
}

/// One connection's exact-mode checks, sans I/O (see the module docs).
/// `T` is the token each check carries back to its caller.
pub struct ScriptPipe<T> {
    store: RedisStore,
    host: String,
    port: u16,
    settings: redis::RedisConnectionInfo,
    /// The TLS to speak, if the store does.
    tls: Option<PipeTls>,
    state: State,
    /// What each reply still to come answers, in order.
    waiting: VecDeque<Waiting<T>>,
    /// Bytes read that do not yet make a whole reply.
    received: Framer,
    /// Bytes to write, one write each.
    output: VecDeque<Vec<u8>>,
    /// No new connection before this (after the pipe's own failure).
    retry_at: Option<Instant>,
    /// How many of `waiting` are late (see "Failures").
    late: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No connection; the host may open one.
    Closed,
    /// The host is opening one.
    Connecting,
    /// Connected: checks may go out.
    Open,
    /// The server refused the connection's set-up (`AUTH`, `SELECT`): the
    /// store's own connection, which did set up, serves every check.
    Refused,
}

struct Waiting<T> {
    /// When it was sent (a run sent again after `NOSCRIPT`: first sent).
    sent: Instant,
    /// When its timeout runs out.
    deadline: Instant,
    command: Command<T>,
    /// The most bytes its reply may take: [`REPLY_ALLOWANCE`] beyond the
    /// command's.
    reply_limit: usize,
}

enum Command<T> {
    /// `AUTH` or `SELECT`, answered `OK`.
    SetUp,
    /// One script run.
    Checks(Checks<T>),
    /// A script run whose checks timed out: its reply is read and dropped.
    Late,
}

struct Checks<T> {
    limiter: RedisLimiter,
    requests: Requests<T>,
    /// The limiter's clock when they were sent (for remembered refusals).
    sent: i64,
    /// Sent again as `EVAL`, after `NOSCRIPT`.
    as_eval: bool,
}

impl<T> std::fmt::Debug for ScriptPipe<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptPipe")
            .field("address", &(&self.host, self.port))
            .field("state", &self.state)
            .field("waiting", &self.waiting.len())
            .finish_non_exhaustive()
    }
}

impl<T> ScriptPipe<T> {
    /// A pipe for `store`'s limiters, or `None` when one TCP connection,
    /// with TLS or without, does not reach it (a Redis Cluster, a Unix
    /// socket): those use the store's own connection.
    pub fn new(store: &RedisStore) -> Option<Self> {
        let (host, port, settings, tls) = store.pipe_target()?;
        Some(ScriptPipe {
            store: store.clone(),
            host,
            port,
            settings,
            tls,
            state: State::Closed,
            waiting: VecDeque::new(),
            received: Framer::default(),
            output: VecDeque::new(),
            retry_at: None,
            late: 0,
        })
    }

    /// The server's host and port.
    pub fn address(&self) -> (&str, u16) {
        (&self.host, self.port)
    }

    /// The TLS the connection must speak (`None`: plain TCP).
    pub fn tls(&self) -> Option<&PipeTls> {
        self.tls.as_ref()
    }

    /// Whether the host should open a connection now: there is none, and
    /// neither Redis nor this pipe failed within the store's retry
    /// interval.
    pub fn wants_connection(&self) -> bool {
        self.state == State::Closed && !self.store.is_down() && self.retry_at.is_none_or(|at| Instant::now() >= at)
    }

    /// The longest the host may take to open the connection (the store's
    /// `connect_timeout`); past it, it gives up and calls
    /// [`lost`](Self::lost).
    pub fn connect_timeout(&self) -> std::time::Duration {
        self.store.connect_timeout()
    }

    /// Whether no check waits for a reply.
    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The host is opening a connection.
    pub fn connecting(&mut self) {
        if self.state == State::Closed {
            self.state = State::Connecting;
        }
    }

    /// The connection is open: its set-up goes out first. There is always
    /// some (a `PING` when there is nothing to set up), so that an error a
    /// server sends in place of the first reply (too many clients) is
    /// taken as the set-up's, never as a script's.
    pub fn opened(&mut self) {
        if self.state != State::Connecting {
            return;
        }
        self.state = State::Open;
        self.received.clear();
        self.output.clear();
        let mut set_up = Vec::new();
        if let Some(password) = self.settings.password() {
            let mut auth = redis::cmd("AUTH");
            if let Some(username) = self.settings.username() {
                auth.arg(username);
            }
            set_up.push(auth.arg(password).clone());
        }
        if self.settings.db() != 0 {
            set_up.push(redis::cmd("SELECT").arg(self.settings.db()).clone());
        }
        if set_up.is_empty() {
            set_up.push(redis::cmd("PING"));
        }
        let sent = Instant::now();
        let deadline = sent + self.store.timeout();
        let mut bytes = Vec::new();
        for command in set_up {
            let before = bytes.len();
            command.write_packed_command(&mut bytes);
            let reply_limit = REPLY_ALLOWANCE + (bytes.len() - before);
            self.waiting.push_back(Waiting { sent, deadline, command: Command::SetUp, reply_limit });
        }
        self.output.push_back(bytes);
    }

    /// Whether a connection is open (once it turns false, the host closes
    /// the connection it has).
    pub fn is_open(&self) -> bool {
        self.state == State::Open
    }

    /// Checks `requests` (`key`, `cost`, token) of `limiter`, as
    /// [`RedisLimiter::check_many_async`] would: those a remembered refusal
    /// decides, or whose key is too long, are answered now, the others go
    /// out. Given back untouched when the pipe cannot take them — not open,
    /// Redis down within the retry interval, a reply late (see "Failures"),
    /// or a limiter of another store — for the limiter's own calls (which
    /// also apply the unavailability policy).
    pub fn check_many(&mut self, limiter: &RedisLimiter, requests: Requests<T>) -> Result<Answered<T>, Requests<T>> {
        if self.state != State::Open || self.late > 0 || self.store.is_down() || !limiter.store().is(&self.store) {
            return Err(requests);
        }
        let mut answered = Vec::new();
        let mut pending = Vec::with_capacity(requests.len());
        for (key, cost, token) in requests {
            let decided = match limiter.checked_key(&key) {
                Ok(checked) => limiter.decided_locally(checked, cost).map(Ok),
                Err(e) => Some(Err(e)),
            };
            match decided {
                Some(answer) => answered.push((token, answer)),
                None => pending.push((key, cost, token)),
            }
        }
        let clock = limiter.clock().now_micros();
        let sent = Instant::now();
        let deadline = sent + self.store.timeout();
        // See "Pipelining" in the module docs.
        let writes = (pending.len() / MIN_CHECKS_PER_WRITE).clamp(1, WRITES_PER_BATCH);
        let per_run = pending.len().div_ceil(writes).min(limiter.checks_per_script()).max(1);
        let runs_per_write = pending.len().div_ceil(per_run).div_ceil(writes);
        let mut pending = pending.into_iter().peekable();
        while pending.peek().is_some() {
            let mut bytes = Vec::new();
            for _ in 0..runs_per_write {
                let requests: Vec<_> = pending.by_ref().take(per_run).collect();
                if requests.is_empty() {
                    break;
                }
                let checks = Checks { limiter: limiter.clone(), requests, sent: clock, as_eval: false };
                self.send(checks, sent, deadline, &mut bytes, &mut answered);
            }
            if !bytes.is_empty() {
                self.output.push_back(bytes);
            }
        }
        Ok(answered)
    }

    /// Writes one script run of `checks` at the end of `bytes` (or, if its
    /// arguments cannot be made, answers them with the error).
    fn send(
        &mut self,
        checks: Checks<T>,
        sent: Instant,
        deadline: Instant,
        bytes: &mut Vec<u8>,
        answered: &mut Answered<T>,
    ) {
        let call = checks
            .limiter
            .script_call("check".to_owned(), checks.requests.iter().map(|(key, cost, _)| (key.as_slice(), *cost)));
        let (keys, args) = match call {
            Ok(call) => call,
            Err(e) => return Self::answer(checks, Err(e), answered),
        };
        let mut command = if checks.as_eval {
            redis::cmd("EVAL").arg(checks.limiter.script_source()).clone()
        } else {
            redis::cmd("EVALSHA").arg(checks.limiter.script().get_hash()).clone()
        };
        let before = bytes.len();
        command.arg(keys.len()).arg(keys).arg(args).write_packed_command(bytes);
        let reply_limit = REPLY_ALLOWANCE + (bytes.len() - before);
        self.waiting.push_back(Waiting { sent, deadline, command: Command::Checks(checks), reply_limit });
    }

    /// Answers every check of a script run from its reply.
    fn answer(checks: Checks<T>, reply: Result<Vec<i64>, Error>, answered: &mut Answered<T>) {
        let Checks { limiter, requests, sent, .. } = checks;
        for (n, (key, cost, token)) in requests.into_iter().enumerate() {
            answered.push((token, limiter.answer(&reply, n, &key, cost, sent)));
        }
    }

    /// The bytes of the next write (empty when there is nothing to
    /// write): call until it is empty, and write each on its own.
    pub fn take_output(&mut self) -> Vec<u8> {
        self.output.pop_front().unwrap_or_default()
    }

    /// Reads `bytes` from the connection, and answers the checks whose
    /// replies are now whole. Bytes that are no reply to what was sent
    /// close the pipe as soon as they arrive (see `frame.rs`).
    pub fn receive(&mut self, bytes: &[u8]) -> Answered<T> {
        let mut answered = Vec::new();
        if self.state != State::Open {
            return answered;
        }
        self.received.push(bytes);
        loop {
            // Each reply's limit is its command's: a `NOSCRIPT` answered
            // here queues a command whose reply may follow in these bytes.
            let limit = self.waiting.front().map(|w| w.reply_limit);
            let failed = match self.received.next(limit) {
                Ok(None) => return answered,
                Ok(Some(value)) => self.reply(value, &mut answered).err(),
                Err(e) => Some(e),
            };
            if let Some(error) = failed {
                answered.extend(self.fail(error));
                return answered;
            }
        }
    }

    /// The bytes received that do not yet make a whole reply (for the
    /// fuzz target, which checks that they are all the pipe holds).
    #[cfg(any(test, feature = "fuzzing"))]
    #[doc(hidden)]
    pub fn held(&self) -> &[u8] {
        self.received.held()
    }

    /// Takes one whole reply; an error closes the pipe.
    fn reply(&mut self, value: Value, answered: &mut Answered<T>) -> Result<(), Error> {
        let Some(waiting) = self.waiting.pop_front() else {
            return Err(Error::Protocol("a reply to nothing sent".to_owned()));
        };
        let reply = match value {
            Value::ServerError(e) => Err(e),
            value => Ok(value),
        };
        match waiting.command {
            Command::SetUp => match reply {
                Ok(_) => Ok(()),
                Err(e) if refuses_credentials(&e) => {
                    self.state = State::Refused;
                    Err(Error::from(redis::RedisError::from(e)))
                }
                // Not this connection's to have, now (too many clients):
                // nothing after it ran, and the store's own connection
                // serves until the pipe tries again.
                Err(_) => Err(Error::Unavailable),
            },
            Command::Checks(mut checks) => {
                let reply = reply.map_err(redis::RedisError::from);
                if let Err(e) = &reply {
                    if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) && !checks.as_eval {
                        // Not run: once more, with the source, within the
                        // time it had.
                        checks.as_eval = true;
                        let mut bytes = Vec::new();
                        self.send(checks, waiting.sent, waiting.deadline, &mut bytes, answered);
                        if !bytes.is_empty() {
                            self.output.push_back(bytes);
                        }
                        return Ok(());
                    }
                }
                // Classified: NOPERM on EVALSHA is `Error::Auth`.
                let reply = reply.map_err(Error::from);
                self.store.note(&reply, waiting.sent);
                Self::answer(checks, reply.and_then(leads), answered);
                Ok(())
            }
            // Its checks were answered: the server answering is all it says.
            Command::Late => {
                self.late -= 1;
                self.store.note(&reply.map_err(|e| Error::Redis(e.into())), waiting.sent);
                Ok(())
            }
        }
    }

    /// When [`expire`](Self::expire) has something to do next: the first
    /// deadline of a command still waiting, or of a late reply's wait (see
    /// "Failures").
    pub fn deadline(&self) -> Option<Instant> {
        self.waiting.iter().map(|w| self.expires(w)).min()
    }

    /// When `waiting` is overdue: its deadline, or a late reply's a
    /// timeout after it.
    fn expires(&self, waiting: &Waiting<T>) -> Instant {
        match waiting.command {
            Command::Late => waiting.deadline + self.store.timeout(),
            Command::SetUp | Command::Checks(_) => waiting.deadline,
        }
    }

    /// Fails the checks whose deadline is past at `now`, as timed out, and
    /// waits on for their replies; closes the pipe, failing everything
    /// waiting, when the connection is silent — a set-up not answered in
    /// time, or a reply a timeout late (see "Failures").
    pub fn expire(&mut self, now: Instant) -> Answered<T> {
        let mut answered = Vec::new();
        let mut first_late = None;
        let mut silent = false;
        for at in 0..self.waiting.len() {
            if self.expires(&self.waiting[at]) > now {
                continue;
            }
            let waiting = &mut self.waiting[at];
            match std::mem::replace(&mut waiting.command, Command::Late) {
                Command::Checks(checks) => {
                    self.late += 1;
                    first_late.get_or_insert(waiting.sent);
                    Self::answer(checks, Err(Error::Timeout), &mut answered);
                }
                command @ (Command::SetUp | Command::Late) => {
                    waiting.command = command;
                    silent = true;
                }
            }
        }
        if let Some(sent) = first_late {
            self.store.note(&Err(Error::Timeout), sent);
        }
        if silent {
            answered.extend(self.fail(Error::Timeout));
        }
        answered
    }

    /// The connection closed, or failed to open. Checks still waiting fail
    /// (through their policy) and mark the store down, as a lost connection
    /// of its own would; a connection that could not be opened only keeps
    /// the pipe closed for the retry interval (see "Failures").
    pub fn lost(&mut self) -> Answered<T> {
        match self.state {
            State::Connecting => {
                self.state = State::Closed;
                self.back_off();
                Vec::new()
            }
            State::Open => {
                let lost = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "the connection to Redis closed");
                self.fail(Error::Redis(redis::RedisError::from(lost)))
            }
            State::Closed | State::Refused => Vec::new(),
        }
    }

    /// The connection's TLS handshake failed on a certificate: the
    /// server's is not trusted, is for another name or has expired, or the
    /// server refused the client's (which, in TLS 1.3, the client hears of
    /// only after its side of the handshake, with the set-up already
    /// sent). `reason` is the host's TLS library's word for it. Checks
    /// still waiting fail with [`Error::Tls`]; the store is not marked
    /// down — the server is up, and retrying within the retry interval
    /// would fail the same way — and the pipe stays closed for the retry
    /// interval while the store's own connection serves (see "Failures").
    pub fn tls_failed(&mut self, reason: &str) -> Answered<T> {
        match self.state {
            State::Connecting => {
                self.state = State::Closed;
                self.back_off();
                Vec::new()
            }
            State::Open => self.fail(Error::Tls(format!("the pipe's connection: {reason}"))),
            State::Closed | State::Refused => Vec::new(),
        }
    }

    /// No new connection within the store's retry interval.
    fn back_off(&mut self) {
        self.retry_at = Some(Instant::now() + self.store.retry_interval());
    }

    /// Closes the pipe and fails every check still waiting with `error`
    /// (which the store takes as Redis failing to answer, by its rule).
    fn fail(&mut self, error: Error) -> Answered<T> {
        if self.state != State::Refused {
            self.state = State::Closed;
        }
        self.back_off();
        self.received.clear();
        self.output.clear();
        self.late = 0;
        let mut answered = Vec::new();
        // Neither the pipe's own failure to get a connection (too many
        // clients) nor a certificate refused says the server is down.
        if let Some(oldest) = self.waiting.front().filter(|_| !matches!(error, Error::Unavailable | Error::Tls(_))) {
            self.store.note(&Err(error.clone()), oldest.sent);
        }
        for waiting in std::mem::take(&mut self.waiting) {
            if let Command::Checks(checks) = waiting.command {
                Self::answer(checks, Err(error.clone()), &mut answered);
            }
        }
        answered
    }
}

/// Whether a set-up command's error says the connection's credentials or
/// database are refused (which retrying cannot change), as opposed to a
/// passing condition such as too many clients.
fn refuses_credentials(error: &redis::ServerError) -> bool {
    match error.code() {
        "WRONGPASS" | "NOAUTH" | "NOPERM" => true,
        // "invalid password", "DB index is out of range", "invalid DB index",
        // AUTH without a password set: as Redis 6 and 7 word them.
        "ERR" => error.details().is_some_and(|d| {
            let d = d.to_ascii_lowercase();
            d.contains("password") || d.contains("db index") || d.contains("auth")
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use ratekeeper::LimiterSpec;

    use super::*;
    use crate::store::StoreOptions;
    use ratekeeper::keyed::MaxKeyBytes;

    const SPEC: LimiterSpec = LimiterSpec::Gcra { max_burst: 4, count_per_period: 3, period_micros: 1_000_000 };

    /// A pipe on a store that never connects, open (its `PING` answered),
    /// with a GCRA check of `key` sent.
    fn waiting_for(key: &str) -> (ScriptPipe<u32>, RedisStore) {
        let store = RedisStore::unconnected("redis://127.0.0.1:1/", StoreOptions::default()).unwrap();
        let limiter =
            RedisLimiter::new(&store, "pipe-test", SPEC).unwrap().max_key_bytes(MaxKeyBytes::new(1 << 16).unwrap());
        let mut pipe = ScriptPipe::new(&store).unwrap();
        pipe.connecting();
        pipe.opened();
        assert_eq!(pipe.take_output(), b"*1\r\n$4\r\nPING\r\n");
        assert!(pipe.receive(b"+PONG\r\n").is_empty());
        let sent = pipe.check_many(&limiter, vec![(key.as_bytes().to_vec(), 1, 7)]).unwrap_or_else(|_| panic!("open"));
        assert!(sent.is_empty());
        assert!(!pipe.take_output().is_empty());
        (pipe, store)
    }

    /// The pipe closed at once, its check failed with a protocol error,
    /// and Redis is not taken for down (its own connection serves).
    fn closed_at_once(pipe: &ScriptPipe<u32>, store: &RedisStore, answered: Answered<u32>) {
        assert!(!pipe.is_open());
        assert!(pipe.is_idle());
        assert!(!store.is_down());
        let [(7, Err(Error::Protocol(_)))] = &answered[..] else {
            panic!("answered {answered:?}");
        };
    }

    // Found by the fuzz target `redis_reply` (inputs `Db((` and `g…r\x01x`):
    // the pipe waited for a line end after bytes that can begin no reply,
    // until the timeout, which then took Redis for down.
    #[test]
    fn bytes_that_are_no_reply_close_the_pipe_at_once() {
        for bytes in [&b"x"[..], b"(", b"HTTP/1.1", b":1x", b"*7\r\n:1\r\n$x"] {
            let (mut pipe, store) = waiting_for("k");
            let answered = pipe.receive(bytes);
            closed_at_once(&pipe, &store, answered);
        }
    }

    // Found by the fuzz target `redis_reply` (input `g…r\x01+`): bytes
    // after the last reply expected sat in the buffer until a check was
    // sent, and then failed it.
    #[test]
    fn a_reply_to_nothing_sent_closes_the_pipe_at_its_first_byte() {
        let (mut pipe, store) = waiting_for("k");
        let answered = pipe.receive(b":0\r\n+");
        assert!(matches!(&answered[..], [(7, Ok(_))]), "{answered:?}");
        assert!(!pipe.is_open());
        assert!(!store.is_down());
    }

    // Found by the fuzz target `redis_reply` (inputs `…$536870912\r\n`,
    // `…*4294967296\r\n`): the pipe went on reading what such a header
    // announced — up to 512 MiB, or four billion elements — before it
    // could answer or fail anything.
    #[test]
    fn a_length_past_any_answer_to_the_command_closes_the_pipe_at_once() {
        for bytes in [&b"$536870912\r\n"[..], b"*4294967296\r\n", b"$70000", b"*30000"] {
            let (mut pipe, store) = waiting_for("k");
            let answered = pipe.receive(bytes);
            closed_at_once(&pipe, &store, answered);
        }
    }

    // What the fuzz target `redis_reply` relies on to repeat a run: an
    // unconnected store never probes the server after a timeout. A probe
    // (of 127.0.0.1:1, refused at once) would mark it down some time later,
    // on the runtime's thread.
    #[test]
    fn a_timeout_never_marks_an_unconnected_store_down() {
        let (mut pipe, store) = waiting_for("k");
        let deadline = pipe.deadline().expect("a check waits");
        let answered = pipe.expire(deadline);
        assert!(matches!(&answered[..], [(7, Err(Error::Timeout))]), "{answered:?}");
        assert!(pipe.is_open(), "a late reply leaves the pipe open");
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!store.is_down());
    }

    #[test]
    fn an_unconnected_store_forgets_that_redis_failed() {
        let (mut pipe, store) = waiting_for("k");
        let answered = pipe.lost();
        assert!(matches!(&answered[..], [(7, Err(Error::Redis(_)))]), "{answered:?}");
        assert!(store.is_down(), "a connection lost while a reply was due");
        store.forget_outcomes();
        assert!(!store.is_down());
    }

    // A client certificate the server refuses is heard of, in TLS 1.3,
    // after the client's side of the handshake: with the set-up, and maybe
    // checks, already sent. Taken as the connection lost, it marked the
    // store down for its retry interval, as if the server were.
    #[test]
    fn a_certificate_refused_fails_the_checks_with_the_tls_error_and_leaves_the_store_up() {
        let (mut pipe, store) = waiting_for("k");
        let answered = pipe.tls_failed("certificate required");
        let [(7, Err(Error::Tls(reason)))] = &answered[..] else {
            panic!("answered {answered:?}");
        };
        assert!(reason.contains("certificate required"), "{reason}");
        assert!(!pipe.is_open());
        assert!(pipe.is_idle());
        assert!(!store.is_down(), "a certificate refused is no server down");
        assert!(!pipe.wants_connection(), "closed for the retry interval");
        // And while still connecting: nothing waits, nothing is noted.
        let store = RedisStore::unconnected("redis://127.0.0.1:1/", StoreOptions::default()).unwrap();
        let mut pipe = ScriptPipe::<u32>::new(&store).unwrap();
        pipe.connecting();
        assert!(pipe.tls_failed("unknown CA").is_empty());
        assert!(!store.is_down());
        assert!(!pipe.wants_connection());
    }

    #[test]
    fn a_reply_may_repeat_the_keys_of_its_command() {
        // An error naming a 64 KiB key (the longest a limiter may take):
        // longer than the allowance, but not than the allowance beyond the
        // command, which holds the key.
        let key = "k".repeat(1 << 16);
        let (mut pipe, store) = waiting_for(&key);
        let error = format!("-ERR ratekeeper: rk:{{pipe-test:{key}}}:gcra does not hold a GCRA state\r\n");
        let answered = pipe.receive(error.as_bytes());
        assert!(pipe.is_open());
        assert!(!store.is_down());
        let [(7, Err(Error::Redis(e)))] = &answered[..] else {
            panic!("answered {answered:?}");
        };
        assert!(e.to_string().contains("does not hold a GCRA state"), "{e}");
    }
}
