//! Reading the scripts' replies, and writing their numeric arguments.
//!
//! Scripts reply with arrays of strings: numbers printed with `%.17g`, which
//! read back bit for bit (a Redis integer reply would truncate them).

use std::time::Duration;

use crate::error::Error;

/// A script's reply: its fields as strings.
#[derive(Debug)]
pub(crate) struct Reply(Vec<String>);

impl Reply {
    pub(crate) fn new(value: redis::Value) -> Result<Self, Error> {
        redis::from_redis_value(value).map(Reply).map_err(|e| Error::Protocol(e.to_string()))
    }

    fn field(&self, i: usize) -> Result<&str, Error> {
        self.0.get(i).map(String::as_str).ok_or_else(|| Error::Protocol(format!("reply too short: {:?}", self.0)))
    }

    /// A double (`inf`, `nan` and `-nan` included).
    pub(crate) fn double(&self, i: usize) -> Result<f64, Error> {
        let s = self.field(i)?;
        let s = s.strip_prefix('-').filter(|rest| rest.eq_ignore_ascii_case("nan")).unwrap_or(s);
        s.parse::<f64>().map_err(|_| Error::Protocol(format!("not a number: {s:?}")))
    }

    /// A Java `long` the script kept as a double: 2^63 stands for
    /// `i64::MAX`, as the saturating cast gives.
    pub(crate) fn micros(&self, i: usize) -> Result<i64, Error> {
        Ok(self.double(i)? as i64)
    }
}

/// A wait in microseconds (never negative) as a `Duration`.
pub(crate) fn wait(micros: i64) -> Duration {
    Duration::from_micros(micros.max(0) as u64)
}

/// A duration as whole microseconds, for a script argument.
pub(crate) fn micros_arg(d: Duration) -> String {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX).to_string()
}

/// A double as Lua's `tonumber` reads it back exactly (`inf` for infinity;
/// NaN never reaches a script: the checks reject it).
pub(crate) fn double_arg(x: f64) -> String {
    if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{x:?}")
    }
}
