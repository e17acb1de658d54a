//! `ratekeeper.RedisStore`: one multiplexed, reconnecting connection to
//! Redis or a Redis Cluster (`ratekeeper_redis::RedisStore`), shared by
//! every limiter made from it. The URLs and options are checked here;
//! connecting blocks (the crate connects only so) with the GIL released.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError, Weak};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyTuple};
use ratekeeper_redis::{Pem, RedisOption, RedisStore, StoreOptions, TlsOptions};
use redis::IntoConnectionInfo;

use super::{Close, Held};
use crate::args;
use crate::errors::{from_redis, invalid_named, wrong_type};
use crate::float_repr;

/// What a URL must be.
const URL_REQUIREMENT: &str = "must be a Redis URL such as 'redis://127.0.0.1:6379/0'";

/// A connection to Redis, or to a Redis Cluster, that any number of
/// limiters and threads share: one multiplexed connection on which their
/// requests are pipelined, driven by ratekeeper's own thread, reconnecting
/// by itself. On a single server, blocking calls go out instead on a plain
/// connection of the calling thread's (a small pool), waited for on that
/// thread with the GIL released: no hand-over to another thread.
///
/// Connect with ``RedisStore.connect(url)`` or
/// ``RedisStore.connect_cluster(urls)`` (or their ``_async`` forms, which
/// do not block the event loop). ``timeout`` bounds every decision,
/// reconnection included (past it, ``RedisTimeoutError`` or the limiter's
/// ``when_unavailable`` policy); ``connect_timeout`` bounds one attempt to
/// connect; after Redis failed to answer, decisions do not try it for
/// ``retry_interval`` (``RedisUnavailableError`` at once, or the policy), so
/// a dead server costs no timeouts. Durations are seconds or
/// ``timedelta``s, each at most an hour (``timeout`` and
/// ``connect_timeout`` above 0).
///
/// A store belongs to the process that connected it: after ``os.fork()``
/// (``multiprocessing``, pre-forking servers) connect a new one in the child.
///
/// ``close()`` (or leaving a ``with`` or ``async with`` block) closes the
/// connection and every limiter and membership made from the store; later
/// calls on any of them raise ``ClosedError``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "RedisStore")]
#[derive(Debug)]
pub struct PyRedisStore {
    store: Held<RedisStore>,
    /// The limiters and memberships made from it (closed with it).
    children: Mutex<Vec<Weak<dyn Close>>>,
    urls: Vec<String>,
    cluster: bool,
    /// The master's name, for a Sentinel store (whose `urls` are the
    /// sentinels').
    master_name: Option<String>,
    connect_timeout: Duration,
}

impl PyRedisStore {
    /// The crate's store (in the process that connected it, until closed).
    pub(crate) fn get(&self, py: Python<'_>) -> PyResult<RedisStore> {
        self.store.get(py)
    }

    /// Registers `child`, made from this store, to be closed with it: at
    /// once if the store closed meanwhile. (`close` marks the store closed
    /// before it takes the children, under the same lock as this: a child
    /// is either taken or sees the store closed.)
    pub(crate) fn adopt(&self, child: Weak<dyn Close>) {
        let mut children = self.children.lock().unwrap_or_else(PoisonError::into_inner);
        if self.store.is_closed() {
            drop(children);
            if let Some(child) = child.upgrade() {
                child.close();
            }
            return;
        }
        children.retain(|c| c.strong_count() > 0);
        children.push(child);
    }
}

/// A store argument of a limiter's constructor.
pub(crate) fn store_arg<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyRedisStore>> {
    obj.cast::<PyRedisStore>().map_err(|_| wrong_type("store", obj, "a ratekeeper.RedisStore"))
}

/// `url` with its password, if any, shown as `***` (for `repr`).
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    match rest.split_once('@') {
        Some((userinfo, host)) if !userinfo.contains('/') => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => url.to_owned(),
        },
        _ => url.to_owned(),
    }
}

fn url_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    let url = args::text(obj, name)?;
    match url.as_str().into_connection_info() {
        Ok(_) => Ok(url),
        Err(_) => Err(invalid_named(name, obj, URL_REQUIREMENT)),
    }
}

/// `master_name`: a non-empty str, and no `cluster=True` beside it.
fn sentinel_master_name(name: &Bound<'_, PyAny>, cluster: bool) -> PyResult<String> {
    let text = name.cast::<PyString>().map_err(|_| wrong_type("master_name", name, "a str"))?.to_cow()?.into_owned();
    if text.is_empty() {
        return Err(invalid_named("master_name", name, "must not be empty"));
    }
    if cluster {
        return Err(invalid_named("master_name", name, "is for Sentinel, not a cluster"));
    }
    Ok(text)
}

/// A PEM option (`tls_ca`, `tls_cert`, `tls_key`): PEM `bytes` (or
/// `bytearray`), or the path of a file holding it (`str` or
/// `os.PathLike`), which the crate reads when it connects.
fn pem_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Pem> {
    const EXPECTED: &str = "a path (str or os.PathLike) or PEM bytes";
    let pem = if let Ok(bytes) = obj.cast::<PyBytes>() {
        Pem::Bytes(bytes.as_bytes().to_vec())
    } else if let Ok(bytes) = obj.cast::<PyByteArray>() {
        Pem::Bytes(bytes.to_vec())
    } else {
        // `str`, or what `os.fspath` takes (a `pathlib.Path`).
        let path: PathBuf = obj.extract().map_err(|_| wrong_type(name, obj, EXPECTED))?;
        Pem::File(path)
    };
    match &pem {
        Pem::Bytes(bytes) if bytes.is_empty() => Err(invalid_named(name, obj, "must not be empty")),
        Pem::File(path) if path.as_os_str().is_empty() => Err(invalid_named(name, obj, "must not be empty")),
        _ => Ok(pem),
    }
}

/// A `str` option that may be absent (`None`) but not empty.
fn name_arg(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<String>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(None) };
    let text = args::text(obj, name)?;
    if text.is_empty() {
        return Err(invalid_named(name, obj, "must not be empty"));
    }
    Ok(Some(text))
}

/// `options` with the ACL credentials and TLS settings of `connect` (and
/// of every other way to connect a store). TLS is on when any `tls_`
/// option is given (else only for a `rediss://` URL).
#[allow(clippy::too_many_arguments)]
pub(crate) fn with_access(
    options: StoreOptions,
    username: Option<&Bound<'_, PyAny>>,
    password: Option<&Bound<'_, PyAny>>,
    tls_ca: Option<&Bound<'_, PyAny>>,
    tls_cert: Option<&Bound<'_, PyAny>>,
    tls_key: Option<&Bound<'_, PyAny>>,
    tls_server_name: Option<&Bound<'_, PyAny>>,
    tls_insecure_skip_verify: Option<&Bound<'_, PyAny>>,
) -> PyResult<StoreOptions> {
    let username = name_arg(username, "username")?;
    // An empty password is a password (`requirepass ""` is not, but an
    // ACL user's may be `nopass`): only its type is checked.
    let password = password.filter(|o| !o.is_none()).map(|o| args::text(o, "password")).transpose()?;
    let pem = |obj: Option<&Bound<'_, PyAny>>, name| obj.filter(|o| !o.is_none()).map(|o| pem_arg(o, name)).transpose();
    let (ca, client_cert, client_key) = (pem(tls_ca, "tls_ca")?, pem(tls_cert, "tls_cert")?, pem(tls_key, "tls_key")?);
    match (tls_cert, tls_key, &client_cert, &client_key) {
        (_, Some(key), None, Some(_)) => return Err(invalid_named("tls_key", key, "must come with tls_cert")),
        (Some(cert), _, Some(_), None) => return Err(invalid_named("tls_cert", cert, "must come with tls_key")),
        _ => {}
    }
    let server_name = name_arg(tls_server_name, "tls_server_name")?;
    let insecure_skip_verify = tls_insecure_skip_verify
        .filter(|o| !o.is_none())
        .map_or(Ok(false), |o| args::boolean(o, "tls_insecure_skip_verify"))?;
    let given = ca.is_some() || client_cert.is_some() || server_name.is_some() || insecure_skip_verify;
    let tls = given.then_some(TlsOptions { ca, client_cert, client_key, server_name, insecure_skip_verify });
    Ok(StoreOptions { username, password, tls, ..options })
}

/// A store option, `default` when not given; its domain is the crate's.
fn option(obj: Option<&Bound<'_, PyAny>>, option: RedisOption, default: Duration) -> PyResult<Duration> {
    obj.map_or(Ok(default), |obj| args::redis_option(obj, option))
}

#[pymethods]
impl PyRedisStore {
    /// Connects: to one server at ``url``, or with ``cluster=True`` to the
    /// Redis Cluster of which ``url`` lists one or more nodes. Prefer
    /// ``connect`` and ``connect_cluster``. ``None`` is the default of each
    /// option: ``timeout`` 0.1 s, ``connect_timeout`` 0.25 s,
    /// ``retry_interval`` 0.2 s.
    #[new]
    ///
    /// With ``master_name``, ``url`` lists the sentinels (one or more) to
    /// ask for that master: prefer ``connect_sentinel``.
    #[pyo3(signature = (
        url, *, cluster = None, timeout = None, connect_timeout = None, retry_interval = None,
        username = None, password = None, tls_ca = None, tls_cert = None, tls_key = None,
        tls_server_name = None, tls_insecure_skip_verify = None, master_name = None,
    ))]
    #[pyo3(text_signature = "(url, *, cluster=False, timeout=None, connect_timeout=None, retry_interval=None, \
                          username=None, password=None, tls_ca=None, tls_cert=None, tls_key=None, \
                          tls_server_name=None, tls_insecure_skip_verify=False, master_name=None)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        cluster: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
        connect_timeout: Option<&Bound<'_, PyAny>>,
        retry_interval: Option<&Bound<'_, PyAny>>,
        username: Option<&Bound<'_, PyAny>>,
        password: Option<&Bound<'_, PyAny>>,
        tls_ca: Option<&Bound<'_, PyAny>>,
        tls_cert: Option<&Bound<'_, PyAny>>,
        tls_key: Option<&Bound<'_, PyAny>>,
        tls_server_name: Option<&Bound<'_, PyAny>>,
        tls_insecure_skip_verify: Option<&Bound<'_, PyAny>>,
        master_name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let cluster = cluster.map_or(Ok(false), |c| args::boolean(c, "cluster"))?;
        let master_name = master_name.map(|name| sentinel_master_name(name, cluster)).transpose()?;
        let list = if master_name.is_some() { "sentinels" } else { "urls" };
        let urls = if cluster || master_name.is_some() {
            if url.is_instance_of::<PyString>() {
                vec![url_arg(url, list)?]
            } else {
                let items = url
                    .try_iter()
                    .map_err(|_| wrong_type(list, url, "a str or a sequence of str"))?
                    .map(|item| url_arg(&item?, list))
                    .collect::<PyResult<Vec<_>>>()?;
                if items.is_empty() {
                    return Err(invalid_named(list, url, "must name at least one node"));
                }
                items
            }
        } else {
            vec![url_arg(url, "url")?]
        };
        let defaults = StoreOptions::default();
        let options = StoreOptions {
            timeout: option(timeout, RedisOption::Timeout, defaults.timeout)?,
            connect_timeout: option(connect_timeout, RedisOption::ConnectTimeout, defaults.connect_timeout)?,
            retry_interval: option(retry_interval, RedisOption::RetryInterval, defaults.retry_interval)?,
            ..StoreOptions::default()
        };
        let options = with_access(
            options,
            username,
            password,
            tls_ca,
            tls_cert,
            tls_key,
            tls_server_name,
            tls_insecure_skip_verify,
        )?;
        let connect_timeout = options.connect_timeout;
        let connected = py.detach(|| {
            if let Some(master_name) = &master_name {
                let sentinels: Vec<&str> = urls.iter().map(String::as_str).collect();
                RedisStore::connect_sentinel(&sentinels, master_name, options)
            } else if cluster {
                let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
                RedisStore::connect_cluster(&nodes, options)
            } else {
                RedisStore::connect(&urls[0], options)
            }
        });
        let store = connected.map_err(|e| from_redis(py, e))?;
        Ok(PyRedisStore {
            store: Held::new(store, "RedisStore"),
            children: Mutex::new(Vec::new()),
            urls,
            cluster,
            master_name,
            connect_timeout,
        })
    }

    /// Whether this is a connection to a Redis Cluster.
    #[getter]
    fn cluster(&self) -> bool {
        self.cluster
    }

    /// The name of the master Redis Sentinel was asked for (``None``: not
    /// a Sentinel store).
    #[getter]
    fn master_name(&self) -> Option<&str> {
        self.master_name.as_deref()
    }

    /// The URLs connected to, as given.
    #[getter]
    fn urls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.urls)
    }

    /// The longest any one decision may take, in seconds.
    #[getter]
    fn timeout(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.get(py)?.timeout().as_secs_f64())
    }

    /// The longest one attempt to connect may take, in seconds.
    #[getter]
    fn connect_timeout(&self) -> f64 {
        self.connect_timeout.as_secs_f64()
    }

    /// How long decisions stop trying Redis after it failed to answer, in
    /// seconds.
    #[getter]
    fn retry_interval(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.get(py)?.retry_interval().as_secs_f64())
    }

    /// Whether Redis failed to answer within the last ``retry_interval``
    /// (decisions send it nothing meanwhile).
    #[getter]
    fn is_down(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.get(py)?.is_down())
    }

    /// Whether ``close()`` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.store.is_closed()
    }

    /// Closes the connection, and every limiter and membership made from
    /// this store (memberships leave their groups; divided limiters too):
    /// later calls on any of them raise ``ClosedError``. Calls already
    /// waiting for Redis complete. Closing twice does nothing more.
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            self.store.close();
            let children = std::mem::take(&mut *self.children.lock().unwrap_or_else(PoisonError::into_inner));
            for child in children.iter().filter_map(Weak::upgrade) {
                child.close();
            }
        });
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        let name = slf.get_type().name()?;
        let shown: Vec<String> = this.urls.iter().map(|u| without_password(u)).collect();
        let urls = if this.cluster || this.master_name.is_some() {
            PyList::new(py, &shown)?.repr()?.to_string()
        } else {
            PyString::new(py, &shown[0]).repr()?.to_string()
        };
        let cluster = if this.cluster { ", cluster=True" } else { "" };
        let cluster = match &this.master_name {
            Some(name) => format!(", master_name={}", PyString::new(py, name).repr()?),
            None => cluster.to_owned(),
        };
        let timeout = match this.store.get(py) {
            Ok(store) => format!(", timeout={}", float_repr(py, store.timeout().as_secs_f64())?),
            Err(_) if this.store.is_closed() => ", closed".to_owned(),
            Err(_) => String::new(),
        };
        Ok(format!("<{name} {urls}{cluster}{timeout}>"))
    }
}
