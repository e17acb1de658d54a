//! Load signals (placeholder until the samplers land: the trait only).

/// Where a load-driven limiter reads the system's load.
pub trait LoadSignal: Send + Sync + std::fmt::Debug {
    /// CPU usage, 0.0 to 1.0 of what the process may use; `None` while unknown.
    fn cpu_usage(&self) -> Option<f64>;
    /// The one-minute load average; `None` while unknown.
    fn load_average(&self) -> Option<f64>;
}

impl<T: LoadSignal + ?Sized> LoadSignal for std::sync::Arc<T> {
    fn cpu_usage(&self) -> Option<f64> {
        (**self).cpu_usage()
    }
    fn load_average(&self) -> Option<f64> {
        (**self).load_average()
    }
}
