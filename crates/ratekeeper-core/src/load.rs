//! [`Load`]: the system's load as the load-driven limiters ([`Bbr`],
//! [`SystemGuard`]) see it — passed in with each call, like the time, so
//! that the core reads nothing itself. The std layer samples it (`/proc`,
//! cgroups) or lets a test set it.
//!
//! [`Bbr`]: crate::Bbr
//! [`SystemGuard`]: crate::SystemGuard

/// A reading of the system's load.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Load {
    /// CPU usage as a fraction (0.0 to 1.0) of what the process may use:
    /// its cgroup's quota when it has one, else all the host's CPUs. 0.0
    /// while unknown, as Kratos' sampler starts.
    pub cpu_usage: f64,
    /// The one-minute system load average; 0.0 while unknown (Sentinel's
    /// -1 "not available" compares the same way against any threshold).
    pub load_average: f64,
}

impl Load {
    /// A reading of `cpu_usage` and `load_average`.
    pub const fn new(cpu_usage: f64, load_average: f64) -> Self {
        Load { cpu_usage, load_average }
    }
}
