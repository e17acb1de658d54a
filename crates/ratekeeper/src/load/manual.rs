//! [`ManualLoad`]: a load signal that says what it is told.

use ratekeeper_core::Error;

use super::reading::AtomicReading;
use super::{check_cpu_usage, check_load_average, LoadSignal};

/// A load signal set by hand, for tests (and for callers who measure load
/// their own way): the load counterpart of [`ManualClock`](crate::ManualClock).
///
/// Both readings start unknown. Setting and reading are single atomic
/// operations, so a test may move the load from one thread while limiters
/// read it on others.
///
/// ```
/// use std::sync::Arc;
/// use ratekeeper::{LoadSignal, ManualLoad};
///
/// let load = Arc::new(ManualLoad::new());
/// assert_eq!(load.cpu_usage(), None);
/// load.set_cpu_usage(0.85)?;
/// load.set_load_average(3.5)?;
/// let shared: Arc<dyn LoadSignal> = load.clone();
/// assert_eq!(shared.cpu_usage(), Some(0.85));
/// assert!(load.set_cpu_usage(1.5).is_err()); // a fraction of the CPU: at most 1.0
/// load.clear();
/// assert_eq!(shared.load_average(), None);
/// # Ok::<(), ratekeeper::Error>(())
/// ```
pub struct ManualLoad {
    cpu_usage: AtomicReading,
    load_average: AtomicReading,
}

impl ManualLoad {
    /// A signal that knows nothing yet: both readings `None`.
    pub const fn new() -> Self {
        ManualLoad { cpu_usage: AtomicReading::none(), load_average: AtomicReading::none() }
    }

    /// Sets the CPU usage, a fraction from 0.0 to 1.0. An error, leaving the
    /// reading as it was, when `usage` is NaN, negative or above 1.0.
    pub fn set_cpu_usage(&self, usage: f64) -> Result<(), Error> {
        self.cpu_usage.store(Some(check_cpu_usage(usage)?));
        Ok(())
    }

    /// Sets the 1-minute load average. An error, leaving the reading as it
    /// was, when `load` is NaN, infinite or negative.
    pub fn set_load_average(&self, load: f64) -> Result<(), Error> {
        self.load_average.store(Some(check_load_average(load)?));
        Ok(())
    }

    /// Makes both readings unknown again.
    pub fn clear(&self) {
        self.cpu_usage.store(None);
        self.load_average.store(None);
    }
}

impl Default for ManualLoad {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ManualLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManualLoad")
            .field("cpu_usage", &self.cpu_usage.load())
            .field("load_average", &self.load_average.load())
            .finish()
    }
}

impl LoadSignal for ManualLoad {
    #[inline]
    fn cpu_usage(&self) -> Option<f64> {
        self.cpu_usage.load()
    }

    #[inline]
    fn load_average(&self) -> Option<f64> {
        self.load_average.load()
    }
}
