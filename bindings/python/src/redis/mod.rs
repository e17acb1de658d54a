//! The distributed limiters of `ratekeeper-redis` for Python: the store
//! ([`store`]), exact mode ([`exact`]) and several exact limits as one
//! ([`composite`]), leased mode ([`leased`]), divided
//! mode ([`divided`]), membership ([`membership`]), Guava's limiter
//! shared through Redis ([`smooth`]) and the shared concurrency limit
//! ([`concurrency`]).
//!
//! Every call that needs Redis has two forms:
//!
//! * a blocking one, which waits for the crate's answer with the GIL
//!   released (other threads run meanwhile; the wait is bounded by the
//!   store's timeout);
//! * for `asyncio`, a `_…_future` method that returns an `asyncio.Future`
//!   of the running loop at once and hands the crate's **callback** form
//!   (`check_with`, `reserve_with`, …) a [`Pending`] that settles it: the
//!   callback runs on the crate's runtime thread, converts the answer under
//!   the GIL and passes it to the loop with `loop.call_soon_threadsafe`, so
//!   the event loop never blocks. The package's `…_async` coroutines await
//!   these futures.
//!
//! The crate's objects are held in [`Local`], which refuses to use them in
//! a process forked from the one that made them (their connection and
//! heartbeats belong to the parent) and never drops them there.
//!
//! ## Closing
//!
//! Every object here can be closed (`close()`, or leaving a `with` or
//! `async with` block): its [`Held`] drops the crate's object at once, and
//! every later call raises `ClosedError` (plain attributes such as `name`
//! still answer). Closing a store closes every limiter and membership made
//! from it, so that the connection itself closes (the crate keeps it while
//! any of them holds it); otherwise each is dropped when Python collects
//! it. Closing twice does nothing more. Node's objects close alike
//! (`ERR_RATEKEEPER_CLOSED`).

pub mod composite;
pub mod concurrency;
pub mod divided;
pub mod exact;
pub mod leased;
pub mod membership;
pub mod smooth;
pub mod store;

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyCFunction;
use ratekeeper::Argument;

use crate::args;
use crate::decision::PyDecision;
use crate::errors::{closed_error, from_redis, rate_limit_error_with};

/// A crate object (a store, a limiter, a membership) of the process that
/// made it.
///
/// `fork` copies a process's memory but only the calling thread: a child's
/// copy of a store has no connection driver, and its copy of a membership
/// would leave the parent's group if dropped. So the object is usable only
/// in its own process (elsewhere: a `RateLimitError` that says to connect
/// again), and in another process it is never dropped.
#[derive(Debug)]
pub struct Local<T> {
    pid: u32,
    value: ManuallyDrop<T>,
    /// "RedisStore", for the error.
    what: &'static str,
}

impl<T> Local<T> {
    pub fn new(value: T, what: &'static str) -> Self {
        Local { pid: std::process::id(), value: ManuallyDrop::new(value), what }
    }

    /// The object, in the process that made it.
    #[inline]
    pub fn get(&self, py: Python<'_>) -> PyResult<&T> {
        if std::process::id() == self.pid {
            Ok(&self.value)
        } else {
            Err(rate_limit_error_with(
                py,
                format!(
                    "this {} was made in process {} and cannot be used in this one ({}), a fork of it: \
                     connect a new RedisStore in this process and make the limiters from it",
                    self.what,
                    self.pid,
                    std::process::id()
                ),
            ))
        }
    }
}

impl<T> Drop for Local<T> {
    fn drop(&mut self) {
        if std::process::id() == self.pid {
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.value) }
        }
    }
}

/// What a store closes when it is closed: the limiters and memberships
/// made from it.
pub trait Close: Send + Sync {
    /// Drops the hold on the crate's object; later calls raise `ClosedError`.
    fn close(&self);
}

/// The crate's object of one Python object, until it is closed: the
/// object in its [`Local`], in a lock that `close` empties. Calls take a
/// clone of the object (they are handles: one reference count) and use it
/// outside the lock, so a blocking call never holds it.
#[derive(Debug)]
pub struct Held<T> {
    inner: Mutex<Option<Local<T>>>,
    /// "RedisLimiter", for the error after closing.
    what: &'static str,
}

impl<T: Clone> Held<T> {
    pub fn new(value: T, what: &'static str) -> Self {
        Held { inner: Mutex::new(Some(Local::new(value, what))), what }
    }

    /// A clone of the object, or `ClosedError` (or, in a forked child,
    /// `Local`'s error).
    pub fn get(&self, py: Python<'_>) -> PyResult<T> {
        let held = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match held.as_ref() {
            Some(local) => Ok(local.get(py)?.clone()),
            None => Err(closed_error(py, self.what)),
        }
    }

    /// Whether `close` was called.
    pub fn is_closed(&self) -> bool {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }
}

impl<T: Send> Close for Held<T> {
    fn close(&self) {
        let taken = self.inner.lock().unwrap_or_else(PoisonError::into_inner).take();
        // Dropped outside the lock: a membership's drop leaves its group,
        // a round trip.
        drop(taken);
    }
}

impl<T: Clone + Send + 'static> Held<T> {
    /// [`Held::new`] for an object made from `store`: closed when the store
    /// is.
    pub fn adopted(value: T, what: &'static str, store: &store::PyRedisStore) -> Arc<Self> {
        let held = Arc::new(Held::new(value, what));
        store.adopt(Arc::downgrade(&held) as Weak<dyn Close>);
        held
    }
}

/// Set when the interpreter begins to exit (an `atexit` hook): answers
/// arriving later are dropped rather than handed to Python.
static EXITING: AtomicBool = AtomicBool::new(false);

/// The `atexit` hook that sets [`EXITING`].
#[pyfunction]
#[pyo3(name = "_interpreter_exiting")]
fn interpreter_exiting() {
    EXITING.store(true, Ordering::Relaxed);
}

/// Settles `future` with `result` or `error`, unless it is already done
/// (cancelled by its task). Runs on the future's event loop, scheduled there
/// by [`Pending::settle`].
#[pyfunction]
#[pyo3(name = "_settle_future")]
fn settle_future(future: &Bound<'_, PyAny>, result: &Bound<'_, PyAny>, error: &Bound<'_, PyAny>) -> PyResult<()> {
    if future.call_method0("done")?.is_truthy()? {
        return Ok(());
    }
    if error.is_none() {
        future.call_method1("set_result", (result,))?;
    } else {
        future.call_method1("set_exception", (error,))?;
    }
    Ok(())
}

/// Adds the hooks above to the module and registers the `atexit` one.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add_function(wrap_pyfunction!(settle_future, module)?)?;
    let exiting = wrap_pyfunction!(interpreter_exiting, module)?;
    py.import("atexit")?.call_method1("register", (exiting,))?;
    module.add_class::<store::PyRedisStore>()?;
    module.add_class::<exact::PyRedisLimiter>()?;
    module.add_class::<composite::PyRedisCompositeLimiter>()?;
    module.add_class::<leased::PyRedisLeasedLimiter>()?;
    module.add_class::<divided::PyRedisDividedLimiter>()?;
    module.add_class::<membership::PyMembership>()?;
    module.add_class::<smooth::PyRedisRateLimiter>()?;
    module.add_class::<concurrency::PyRedisConcurrencyLimiter>()?;
    module.add_class::<concurrency::PyConcurrencyLease>()?;
    module.add_class::<smooth::PyRedisRateLimiterState>()?;
    Ok(())
}

/// `_settle_future`, looked up once.
fn settle_function(py: Python<'_>) -> PyResult<&Bound<'_, PyCFunction>> {
    static SETTLE: PyOnceLock<Py<PyCFunction>> = PyOnceLock::new();
    SETTLE.import(py, "ratekeeper._ratekeeper", "_settle_future")
}

/// `asyncio.get_running_loop`, looked up once.
fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    GET_RUNNING_LOOP.import(py, "asyncio", "get_running_loop")?.call0()
}

/// An `asyncio.Future` waiting for an answer of the crate, and its loop.
#[derive(Debug)]
pub struct Pending {
    event_loop: Py<PyAny>,
    future: Py<PyAny>,
}

impl Pending {
    /// A new future of the running event loop (`RuntimeError` outside one,
    /// as `asyncio.get_running_loop` raises), and the future to return.
    pub fn new(py: Python<'_>) -> PyResult<(Pending, Py<PyAny>)> {
        let event_loop = running_loop(py)?;
        let future = event_loop.call_method0("create_future")?.unbind();
        Ok((Pending { event_loop: event_loop.unbind(), future: future.clone_ref(py) }, future))
    }

    /// Settles the future from any thread: converts `answer` under the GIL
    /// and schedules `_settle_future` on the loop. An answer that comes
    /// while the interpreter exits, or after its loop was closed, is
    /// dropped: nobody can await it any more.
    pub fn settle<T>(
        self,
        answer: Result<T, ratekeeper_redis::Error>,
        convert: impl for<'py> FnOnce(Python<'py>, T) -> PyResult<Bound<'py, PyAny>>,
    ) {
        if EXITING.load(Ordering::Relaxed) {
            // Never touch Python objects without the interpreter.
            std::mem::forget(self);
            return;
        }
        let mut this = Some(self);
        let _ = Python::try_attach(|py| {
            let Some(this) = this.take() else { return };
            let (result, error) = match answer.map_err(|e| from_redis(py, e)).and_then(|v| convert(py, v)) {
                Ok(value) => (value, py.None().into_bound(py)),
                Err(e) => (py.None().into_bound(py), e.into_value(py).into_bound(py).into_any()),
            };
            let scheduled = settle_function(py).and_then(|settle| {
                this.event_loop.call_method1(py, "call_soon_threadsafe", (settle, &this.future, result, error))
            });
            if let Err(e) = scheduled {
                // `RuntimeError: Event loop is closed`: nobody awaits the
                // future. Anything else is reported, never raised here.
                let closed = this.event_loop.call_method0(py, "is_closed").and_then(|c| c.is_truthy(py));
                if !matches!(closed, Ok(true)) {
                    e.write_unraisable(py, None);
                }
            }
        });
        // Not attached (the interpreter is gone or going): leak the
        // references rather than drop them without Python.
        if let Some(this) = this {
            std::mem::forget(this);
        }
    }
}

/// A decision as the future's result.
pub(crate) fn decision_object(py: Python<'_>, decision: ratekeeper::Decision) -> PyResult<Bound<'_, PyAny>> {
    Ok(PyDecision(decision).into_pyobject(py)?.into_any())
}

/// A `max_keys` argument, as a `usize`.
pub(crate) fn max_keys_arg(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    let max = args::count(obj, Argument::MaxKeys)?;
    usize::try_from(max)
        .map_err(|_| crate::errors::from_rust(obj.py(), ratekeeper::Error::invalid_uint(Argument::MaxKeys, max)))
}

/// `None`, the result of the refunds' futures.
pub(crate) fn none_object(py: Python<'_>, (): ()) -> PyResult<Bound<'_, PyAny>> {
    Ok(py.None().into_bound(py))
}

/// A `bool` as a Python object (the resets' futures).
pub(crate) fn bool_object(py: Python<'_>, value: bool) -> PyResult<Bound<'_, PyAny>> {
    Ok(pyo3::types::PyBool::new(py, value).to_owned().into_any())
}
