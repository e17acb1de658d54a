//! Promises settled from other threads, without blocking the event loop
//! and without keeping it alive when nothing is pending.
//!
//! A call that waits for Redis returns a Promise at once and hands a
//! [`Done`] to the `ratekeeper-redis` crate's callback form (`check_with`,
//! `reserve_with`, …), whose callback runs on the crate's runtime thread.
//! `Done` carries the answer back to the JavaScript thread through one
//! Node-API thread-safe function per environment, which settles the
//! Promise there. Node dispatches the queued answers in batches (one wake-up
//! of the event loop for every answer that arrived meanwhile), so 32
//! decisions in flight cost the loop far less than 32 wake-ups.
//!
//! The calls that block (connecting, joining a group: the crate has only
//! blocking forms of those) run on libuv's thread pool instead
//! ([`blocking`]), never on the event loop's thread.
//!
//! ## Keeping the process alive, and letting it exit
//!
//! The thread-safe function is *unreferenced* while no answer is pending, so
//! an idle store never keeps Node running (`node -e` with a store exits);
//! it is referenced from the first pending call to the last answer, so a
//! program awaiting a decision does not exit under it. Blocking calls are
//! libuv work requests, pending until done.
//!
//! ## Answers that are already there
//!
//! The crate calls back at once, on the calling thread, when it can decide
//! without a round trip (a remembered refusal, a lease that covers the
//! cost). [`Done`] then settles the Promise before the call returns — no
//! thread-safe function, no extra turn of the event loop.
//!
//! ## Teardown
//!
//! When the environment goes away (a worker thread ends, the process exits)
//! Node frees its thread-safe functions; answers arriving later must not
//! touch it. A cleanup hook, registered after the thread-safe function so
//! that it runs before Node's, takes it out of [`Shared`] under a write lock;
//! the runtime thread calls it only under the read lock. Promises still
//! pending then are abandoned with their environment.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, PoisonError, RwLock};
use std::thread::ThreadId;

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper::Decision;

use crate::bound::{scratch_array, Scratch, DECISION_WORDS};
use crate::error::{self, boundary, guarded, Failure};
use crate::js::{self, Js, Kind};

/// How an answer becomes a JavaScript value, on the JavaScript thread (or
/// the failure the Promise is rejected with).
pub(crate) type Answer = Box<dyn FnOnce(&Cx) -> Result<sys::napi_value, Failure> + Send>;

/// What an [`Answer`] may use: the environment, and a way to make a
/// `Decision`.
pub(crate) struct Cx<'a> {
    pub(crate) env: sys::napi_env,
    local: &'a Local,
}

impl Cx<'_> {
    /// A JavaScript `Decision` of `d`: written to the environment's scratch
    /// words and made by the package's own `decisionAt` (the function given
    /// to `redisInit`), as for every synchronous decision.
    pub(crate) fn decision(&self, d: &Decision) -> Result<sys::napi_value, Failure> {
        self.local.scratch.scratch.write_decision(0, d);
        let mut make = ptr::null_mut();
        // SAFETY: a reference made in this environment, on its thread.
        let status = unsafe { sys::napi_get_reference_value(self.env, self.local.make_decision, &mut make) };
        js::check(self.env, status, "get reference")?;
        let (mut undefined, mut out) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: calls the JavaScript function `redisInit` was given, with
        // no arguments.
        let status = unsafe {
            sys::napi_get_undefined(self.env, &mut undefined);
            sys::napi_call_function(self.env, undefined, make, 0, ptr::null(), &mut out)
        };
        js::check(self.env, status, "make a Decision")?;
        Ok(out)
    }

    /// A number.
    pub(crate) fn number(&self, x: f64) -> Result<sys::napi_value, Failure> {
        js::number(self.env, x)
    }

    /// A boolean.
    pub(crate) fn boolean(&self, b: bool) -> Result<sys::napi_value, Failure> {
        let mut out = ptr::null_mut();
        // SAFETY: plain value creation.
        js::check(self.env, unsafe { sys::napi_get_boolean(self.env, b, &mut out) }, "get boolean")?;
        Ok(out)
    }

    /// `undefined`.
    pub(crate) fn undefined(&self) -> Result<sys::napi_value, Failure> {
        let mut out = ptr::null_mut();
        // SAFETY: plain value creation.
        js::check(self.env, unsafe { sys::napi_get_undefined(self.env, &mut out) }, "get undefined")?;
        Ok(out)
    }
}

/// A pointer that crosses threads but is used on its environment's thread
/// only (a deferred, a thread-safe function).
#[derive(Clone, Copy)]
struct Raw<P>(P);
// SAFETY: the pointers wrapped are only dereferenced by Node-API calls made
// on the environment's thread, or (the thread-safe function) by the
// Node-API calls made for use from any thread.
unsafe impl<P> Send for Raw<P> {}
// SAFETY: as above.
unsafe impl<P> Sync for Raw<P> {}

/// The part of an environment's state that other threads reach.
struct Shared {
    /// `None` once the environment is being torn down.
    tsfn: RwLock<Option<Raw<sys::napi_threadsafe_function>>>,
    js_thread: ThreadId,
}

/// An environment's state, on its JavaScript thread.
struct Local {
    env: sys::napi_env,
    shared: Arc<Shared>,
    /// The package's `() => decisionAt(scratch, …)`.
    make_decision: sys::napi_ref,
    scratch: Arc<Words>,
    /// Answers on their way through the thread-safe function.
    pending: Cell<usize>,
}

/// The scratch words answers are written to.
struct Words {
    scratch: Scratch,
}

thread_local! {
    /// The state of the environment whose JavaScript thread this is.
    static LOCAL: RefCell<Option<Arc<Local>>> = const { RefCell::new(None) };
    /// An answer given on the JavaScript thread while a call was starting it
    /// (see `Done`), with its deferred.
    static IMMEDIATE: RefCell<Option<Job>> = const { RefCell::new(None) };
}

// SAFETY: `Local` is only ever used on its environment's thread (it lives in
// a thread-local); the `Arc` is for `Cx` borrows, never sent.
unsafe impl Send for Local {}
// SAFETY: as above.
unsafe impl Sync for Local {}

fn local() -> Result<Arc<Local>, Failure> {
    LOCAL.with(|l| l.borrow().clone()).ok_or_else(|| Failure::Internal("redisInit was not called".to_owned()))
}

/// An answer on its way to its Promise.
struct Job {
    deferred: Raw<sys::napi_deferred>,
    answer: Answer,
}

/// Sets up the thread-safe function of this environment and returns the
/// scratch words answers come back in (a `Float64Array`); `makeDecision`
/// makes a `Decision` from them. Called once by `node/lib/redis.js`; a
/// second call returns the same words.
#[napi(ts_args_type = "makeDecision: () => unknown", ts_return_type = "Float64Array")]
pub fn redis_init<'env>(env: &'env Env, make_decision: Unknown<'_>) -> napi::Result<Unknown<'env>> {
    guarded(env, || {
        let env = env.raw();
        if let Some(local) = LOCAL.with(|l| l.borrow().clone()).filter(|l| l.env == env) {
            let array = scratch_array(env, &local.scratch, |w| &w.scratch)?;
            // SAFETY: a value just created in this call's environment.
            return Ok(unsafe { Unknown::from_raw_unchecked(env, array) });
        }
        let make = Js::new(env, make_decision.raw());
        if make.kind() != Kind::Function {
            return Err(Failure::WrongType { argument: "makeDecision", value: make, expected: "a function" });
        }
        let mut reference = ptr::null_mut();
        // SAFETY: a live function of the running call.
        js::check(env, unsafe { sys::napi_create_reference(env, make.raw, 1, &mut reference) }, "reference")?;
        let name = js::string(env, "ratekeeper redis")?;
        let mut tsfn = ptr::null_mut();
        // SAFETY: no JavaScript function (`call_js` does the work), no
        // limit on the queue, one thread (this one) until teardown.
        let status = unsafe {
            sys::napi_create_threadsafe_function(
                env,
                ptr::null_mut(),
                ptr::null_mut(),
                name,
                0,
                1,
                ptr::null_mut(),
                None,
                ptr::null_mut(),
                Some(call_js),
                &mut tsfn,
            )
        };
        js::check(env, status, "create threadsafe function")?;
        // Idle: it must not keep the event loop alive.
        // SAFETY: the function just created, on its thread.
        js::check(env, unsafe { sys::napi_unref_threadsafe_function(env, tsfn) }, "unref")?;
        let shared = Arc::new(Shared { tsfn: RwLock::new(Some(Raw(tsfn))), js_thread: std::thread::current().id() });
        // Registered after the thread-safe function: runs before Node frees it.
        let hook = Arc::into_raw(Arc::clone(&shared)).cast_mut().cast::<c_void>();
        // SAFETY: `teardown` takes back the reference `hook` holds, once.
        js::check(env, unsafe { sys::napi_add_env_cleanup_hook(env, Some(teardown), hook) }, "cleanup hook")?;
        let scratch = Arc::new(Words { scratch: Scratch::new(DECISION_WORDS) });
        let array = scratch_array(env, &scratch, |w| &w.scratch)?;
        let local = Local { env, shared, make_decision: reference, scratch, pending: Cell::new(0) };
        LOCAL.with(|l| *l.borrow_mut() = Some(Arc::new(local)));
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env, array) })
    })
}

/// The environment is going away: no thread may use its thread-safe
/// function from now on (see the module docs).
unsafe extern "C" fn teardown(arg: *mut c_void) {
    // SAFETY: `arg` came from `Arc::into_raw` in `redis_init`; the hook runs once.
    let shared = unsafe { Arc::from_raw(arg.cast_const().cast::<Shared>()) };
    let tsfn = shared.tsfn.write().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(Raw(tsfn)) = tsfn {
        // SAFETY: released once; Node frees it with the environment.
        unsafe { sys::napi_release_threadsafe_function(tsfn, sys::ThreadsafeFunctionReleaseMode::abort) };
    }
    // The reference to `makeDecision` goes with the environment.
    LOCAL.with(|l| l.borrow_mut().take());
}

/// Runs on the JavaScript thread for each batch of answers sent through the
/// thread-safe function.
unsafe extern "C" fn call_js(env: sys::napi_env, _js: sys::napi_value, _context: *mut c_void, data: *mut c_void) {
    // SAFETY: `data` came from `Box::into_raw` in `send_all`, and is
    // delivered once.
    let jobs = unsafe { Box::from_raw(data.cast::<Vec<Job>>()) };
    if env.is_null() {
        return; // torn down: the Promises are abandoned with their environment
    }
    let Ok(local) = local() else { return };
    local.answered(jobs.len());
    for job in *jobs {
        local.settle_scoped(job.deferred, job.answer);
    }
}

impl Local {
    /// `n` pending Promises are being settled: once none is left, the
    /// thread-safe function no longer keeps the event loop alive.
    fn answered(&self, n: usize) {
        let left = self.pending.get().saturating_sub(n);
        self.pending.set(left);
        if left == 0 {
            if let Some(Raw(tsfn)) = *self.shared.tsfn.read().unwrap_or_else(PoisonError::into_inner) {
                // SAFETY: on the environment's thread.
                unsafe { sys::napi_unref_threadsafe_function(self.env, tsfn) };
            }
        }
    }

    /// [`settle`], in a handle scope of its own.
    fn settle_scoped(
        &self,
        deferred: Raw<sys::napi_deferred>,
        answer: impl FnOnce(&Cx) -> Result<sys::napi_value, Failure>,
    ) {
        let mut scope = ptr::null_mut();
        // SAFETY: one handle scope per answer, closed below.
        unsafe { sys::napi_open_handle_scope(self.env, &mut scope) };
        settle(self, deferred, answer);
        // SAFETY: the scope opened above.
        unsafe { sys::napi_close_handle_scope(self.env, scope) };
    }
}

/// Resolves or rejects a Promise with its answer.
fn settle(
    local: &Local,
    deferred: Raw<sys::napi_deferred>,
    answer: impl FnOnce(&Cx) -> Result<sys::napi_value, Failure>,
) {
    let env = local.env;
    let cx = Cx { env, local };
    let value = boundary(|| answer(&cx)).and_then(|r| r);
    let deferred = deferred.0;
    // SAFETY: the deferred of a Promise of this environment, settled once.
    unsafe {
        match value {
            Ok(value) => {
                sys::napi_resolve_deferred(env, deferred, value);
            }
            Err(failure) => {
                if let Some(error) = error::value(env, failure) {
                    sys::napi_reject_deferred(env, deferred, error);
                }
            }
        }
    }
}

/// The way back to one Promise: give it an answer with [`Done::answer`]
/// (from any thread). Dropped unanswered — a task of the crate that ended
/// without calling back — it rejects the Promise with an internal error,
/// so that no Promise is left pending for ever.
pub(crate) struct Done {
    job: Option<(Raw<sys::napi_deferred>, Arc<Shared>)>,
}

impl Done {
    /// Settles the Promise with `answer`, on the JavaScript thread.
    pub(crate) fn answer(mut self, answer: impl FnOnce(&Cx) -> Result<sys::napi_value, Failure> + Send + 'static) {
        if let Some((deferred, shared)) = self.job.take() {
            send(&shared, Job { deferred, answer: Box::new(answer) });
        }
    }

    /// Settles the Promise with a decision, or rejects it with the error.
    pub(crate) fn decision(self, result: Result<Decision, ratekeeper_redis::Error>) {
        self.answer(move |cx| cx.decision(&result?));
    }

    /// [`Done::decision`] for many Promises of one environment at once, from
    /// the crate's runtime thread: one trip through the thread-safe function
    /// for all of them, so the JavaScript thread settles them in one go (and
    /// its next checks go out together: see `redis::batch`).
    pub(crate) fn decisions(answered: Vec<(Done, Result<Decision, ratekeeper_redis::Error>)>) {
        let mut shared = None;
        let mut jobs = Vec::with_capacity(answered.len());
        for (mut done, result) in answered {
            if let Some((deferred, of)) = done.job.take() {
                let answer: Answer = Box::new(move |cx| cx.decision(&result?));
                jobs.push(Job { deferred, answer });
                shared.get_or_insert(of);
            }
        }
        if let Some(shared) = shared {
            send_all(&shared, jobs);
        }
    }
}

/// Settles Promises with decisions now. Only on their environment's
/// JavaScript thread, inside a call from JavaScript: the answers the
/// binding's own socket brought (`redis::pipe`), with no thread-safe
/// function and no extra turn of the event loop.
pub(crate) fn settle_now(answered: ratekeeper_redis::Answered<Done>) {
    if answered.is_empty() {
        return;
    }
    let Ok(local) = local() else { return };
    for (mut done, result) in answered {
        if let Some((deferred, _)) = done.job.take() {
            local.answered(1);
            local.settle_scoped(deferred, move |cx| cx.decision(&result?));
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        if let Some((deferred, shared)) = self.job.take() {
            let answer: Answer =
                Box::new(|_| Err(Failure::Internal("a Redis call ended without an answer".to_owned())));
            send(&shared, Job { deferred, answer });
        }
    }
}

/// Sends a job to the JavaScript thread: kept for the call that is starting
/// it when on that thread (see the module docs), else through the
/// thread-safe function.
fn send(shared: &Shared, job: Job) {
    if std::thread::current().id() == shared.js_thread {
        // (Fails only while the thread's locals are being destroyed — a
        // queued check dropped as its thread ends: abandoned.)
        let _ = IMMEDIATE.try_with(|slot| *slot.borrow_mut() = Some(job));
        return;
    }
    send_all(shared, vec![job]);
}

/// Sends jobs of one environment through its thread-safe function, as one
/// call of `call_js`. (Also right on the JavaScript thread itself: the
/// jobs are then settled on a later turn.)
fn send_all(shared: &Shared, jobs: Vec<Job>) {
    let tsfn = shared.tsfn.read().unwrap_or_else(PoisonError::into_inner);
    let Some(Raw(tsfn)) = *tsfn else { return }; // torn down: abandoned
    let data = Box::into_raw(Box::new(jobs)).cast::<c_void>();
    // SAFETY: a live thread-safe function (the read lock keeps teardown
    // from taking it meanwhile); `call_js` takes `data` back.
    let status =
        unsafe { sys::napi_call_threadsafe_function(tsfn, data, sys::ThreadsafeFunctionCallMode::nonblocking) };
    if status != sys::Status::napi_ok {
        // Closing: the jobs were not queued.
        // SAFETY: nothing else holds `data`.
        drop(unsafe { Box::from_raw(data.cast::<Vec<Job>>()) });
    }
}

/// A Promise whose answer `start` arranges (by handing the [`Done`] to a
/// callback form of the crate). A failure of `start` itself (a bad
/// argument) rejects the Promise: calls that return a Promise never throw.
pub(crate) fn promise(
    env: sys::napi_env,
    start: impl FnOnce(Done) -> Result<(), Failure>,
) -> Result<sys::napi_value, Failure> {
    let local = local()?;
    let (mut deferred, mut promise) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: plain value creation in the running call's environment.
    js::check(env, unsafe { sys::napi_create_promise(env, &mut deferred, &mut promise) }, "create promise")?;
    IMMEDIATE.with(|slot| slot.borrow_mut().take());
    let done = Done { job: Some((Raw(deferred), Arc::clone(&local.shared))) };
    let started = start(done);
    let immediate = IMMEDIATE.with(|slot| slot.borrow_mut().take());
    match (started, immediate) {
        (Err(failure), _) => {
            if let Some(error) = error::value(env, failure) {
                // SAFETY: the deferred just created, settled once.
                unsafe { sys::napi_reject_deferred(env, deferred, error) };
            }
        }
        (Ok(()), Some(job)) => settle(&local, job.deferred, job.answer),
        (Ok(()), None) => {
            let pending = local.pending.get();
            local.pending.set(pending + 1);
            if pending == 0 {
                if let Some(Raw(tsfn)) = *local.shared.tsfn.read().unwrap_or_else(PoisonError::into_inner) {
                    // SAFETY: on the environment's thread.
                    js::check(env, unsafe { sys::napi_ref_threadsafe_function(env, tsfn) }, "ref")?;
                }
            }
        }
    }
    Ok(promise)
}

/// A Promise rejected with `failure` (a call that returns a Promise never
/// throws).
pub(crate) fn rejected(env: sys::napi_env, failure: Failure) -> Result<sys::napi_value, Failure> {
    let (mut deferred, mut promise) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: plain value creation in the running call's environment.
    js::check(env, unsafe { sys::napi_create_promise(env, &mut deferred, &mut promise) }, "create promise")?;
    if let Some(error) = error::value(env, failure) {
        // SAFETY: the deferred just created, settled once.
        unsafe { sys::napi_reject_deferred(env, deferred, error) };
    }
    Ok(promise)
}

/// A call that blocks, run on libuv's thread pool: `work` runs there and
/// returns the answer, which settles the returned Promise on the JavaScript
/// thread.
pub(crate) fn blocking(
    env: sys::napi_env,
    work: impl FnOnce() -> Answer + Send + 'static,
) -> Result<sys::napi_value, Failure> {
    let (mut deferred, mut promise) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: plain value creation in the running call's environment.
    js::check(env, unsafe { sys::napi_create_promise(env, &mut deferred, &mut promise) }, "create promise")?;
    let task = Box::into_raw(Box::new(Task {
        work: Some(Box::new(work)),
        answer: None,
        deferred: Raw(deferred),
        handle: Raw(ptr::null_mut()),
    }));
    let name = js::string(env, "ratekeeper redis connect")?;
    let mut handle = ptr::null_mut();
    // SAFETY: `execute` and `complete` take `task` as the `Task` it is;
    // `complete` frees it, once.
    let status = unsafe {
        sys::napi_create_async_work(env, ptr::null_mut(), name, Some(execute), Some(complete), task.cast(), &mut handle)
    };
    if status != sys::Status::napi_ok {
        // SAFETY: not queued: nothing else holds `task`.
        drop(unsafe { Box::from_raw(task) });
        js::check(env, status, "create async work")?;
    }
    // SAFETY: `task` is live until `complete`.
    unsafe { (*task).handle = Raw(handle) };
    // SAFETY: the work just created.
    js::check(env, unsafe { sys::napi_queue_async_work(env, handle) }, "queue async work")?;
    Ok(promise)
}

/// A blocking call on its way through libuv's thread pool.
struct Task {
    work: Option<Box<dyn FnOnce() -> Answer + Send>>,
    answer: Option<Answer>,
    deferred: Raw<sys::napi_deferred>,
    handle: Raw<sys::napi_async_work>,
}

/// Runs the work, on a thread of the pool.
unsafe extern "C" fn execute(_env: sys::napi_env, data: *mut c_void) {
    // SAFETY: the `Task` of `blocking`, used by this thread alone until
    // `complete`.
    let task = unsafe { &mut *data.cast::<Task>() };
    if let Some(work) = task.work.take() {
        let answer = boundary(work).unwrap_or_else(|failure| {
            let message = match failure {
                Failure::Internal(message) => message,
                _ => "a blocking call failed".to_owned(),
            };
            Box::new(move |_: &Cx| Err(Failure::Internal(message)))
        });
        task.answer = Some(answer);
    }
}

/// Settles the Promise, on the JavaScript thread.
unsafe extern "C" fn complete(env: sys::napi_env, status: sys::napi_status, data: *mut c_void) {
    // SAFETY: the `Task` of `blocking`, freed here, once.
    let task = unsafe { Box::from_raw(data.cast::<Task>()) };
    // SAFETY: the work of this task, done.
    unsafe { sys::napi_delete_async_work(env, task.handle.0) };
    let answer = match task.answer {
        Some(answer) if status == sys::Status::napi_ok => answer,
        _ => Box::new(|_: &Cx| Err(Failure::Internal("a blocking call was cancelled".to_owned()))),
    };
    let Ok(local) = local() else { return };
    settle(&local, task.deferred, answer);
}
