//! Traffic traces: the arrivals a simulation replays, and the CSV files
//! they are read from.
//!
//! A trace is a CSV file, one request per line:
//!
//! ```text
//! time,cost          <- optional header; names the columns
//! 0.000000,1
//! 0.250000,3
//! 1.5                <- cost defaults to 1
//! ```
//!
//! Columns are found by the header's names — `time` (seconds, decimal:
//! `12.000250`) or `time_us` (whole microseconds), and optionally `cost`
//! (a whole number ≥ 1) — or, without a header, are `time,cost` in that
//! order. Other columns are ignored. Blank lines and lines starting with
//! `#` are skipped. Times must not go backwards (a limiter's clock cannot),
//! and are counted from the limiters' creation at 0.
//!
//! Every error names the line and column (1-based; the column is the
//! character where the offending field starts) and what was expected.

use std::fmt;
use std::io::BufRead;

use crate::durations;
use crate::spec_syntax::parse_count;

/// One request: when it arrives and what it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Microseconds since the limiters were created.
    pub at_micros: i64,
    /// Units it asks for (at least 1).
    pub cost: u64,
}

/// A malformed trace: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based line.
    pub line: u64,
    /// 1-based column (characters) where the offending field starts.
    pub column: u64,
    /// What is wrong, naming the value.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for TraceError {}

#[derive(Debug, Clone, Copy)]
enum TimeUnit {
    Seconds,
    Micros,
}

#[derive(Debug, Clone, Copy)]
struct Columns {
    time: usize,
    unit: TimeUnit,
    cost: Option<usize>,
    /// Without a header the cost column may be missing from a line.
    headerless: bool,
}

/// A field of a line, with the character column where it starts.
struct Field<'a> {
    text: &'a str,
    column: u64,
}

fn split_fields(line: &str) -> Vec<Field<'_>> {
    let mut fields = Vec::new();
    let mut column = 1u64;
    for raw in line.split(',') {
        let leading = raw.chars().take_while(|c| c.is_whitespace()).count() as u64;
        fields.push(Field { text: raw.trim(), column: column + leading });
        column += raw.chars().count() as u64 + 1;
    }
    fields
}

/// The most requests a trace may hold: about 1.6 GB of arrivals.
pub const MAX_ARRIVALS: usize = 100_000_000;

/// Reads a CSV trace. `on_line` is called with the bytes read so far every
/// 64 Ki lines (for progress on long traces).
pub fn read_csv(input: impl BufRead, mut on_bytes: impl FnMut(u64)) -> Result<Vec<Arrival>, TraceError> {
    let mut arrivals = Vec::new();
    let mut columns: Option<Columns> = None;
    let mut last: Option<(i64, u64)> = None;
    let mut bytes_read = 0u64;
    let mut buf = Vec::new();
    let mut input = input;
    for line_number in 1u64.. {
        buf.clear();
        let n = input.read_until(b'\n', &mut buf).map_err(|e| TraceError {
            line: line_number,
            column: 1,
            message: format!("cannot read: {e}"),
        })?;
        if n == 0 {
            break;
        }
        bytes_read += n as u64;
        if line_number % 65_536 == 0 {
            on_bytes(bytes_read);
        }
        let err = |column: u64, message: String| TraceError { line: line_number, column, message };
        let line = std::str::from_utf8(&buf).map_err(|e| {
            let column = String::from_utf8_lossy(&buf[..e.valid_up_to()]).chars().count() as u64 + 1;
            err(column, "not UTF-8 text".into())
        })?;
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let fields = split_fields(line);
        let cols = match columns {
            Some(c) => c,
            None => {
                let first = &fields[0];
                if looks_like_a_number(first.text) {
                    let c = Columns { time: 0, unit: TimeUnit::Seconds, cost: Some(1), headerless: true };
                    columns = Some(c);
                    c
                } else {
                    columns = Some(header(&fields).map_err(|(column, m)| err(column, m))?);
                    continue;
                }
            }
        };
        let field = |i: usize, name: &str| {
            fields.get(i).ok_or_else(|| {
                err(line.chars().count() as u64 + 1, {
                    let n = fields.len();
                    format!("the line has {n} field{}; `{name}` is field {}", if n == 1 { "" } else { "s" }, i + 1)
                })
            })
        };
        let t = field(
            cols.time,
            match cols.unit {
                TimeUnit::Seconds => "time",
                TimeUnit::Micros => "time_us",
            },
        )?;
        let at_micros = match cols.unit {
            TimeUnit::Seconds => durations::parse_seconds_micros(t.text).ok_or_else(|| {
                err(
                    t.column,
                    format!("time `{}` is not a time in seconds ≥ 0 to the microsecond (such as 1.250000)", t.text),
                )
            })?,
            TimeUnit::Micros => parse_count(t.text).and_then(|v| i64::try_from(v).ok()).ok_or_else(|| {
                err(t.column, format!("time_us `{}` is not a whole number of microseconds ≥ 0", t.text))
            })?,
        };
        let cost = match cols.cost {
            None => 1,
            Some(i) if cols.headerless && i >= fields.len() => 1,
            Some(i) => {
                let c = field(i, "cost")?;
                if c.text.is_empty() {
                    1
                } else {
                    parse_count(c.text)
                        .filter(|&v| v >= 1)
                        .ok_or_else(|| err(c.column, format!("cost `{}` is not a whole number ≥ 1", c.text)))?
                }
            }
        };
        if let Some((previous, previous_line)) = last {
            if at_micros < previous {
                return Err(err(
                    t.column,
                    format!(
                        "time {} s is before the previous request's, {} s (line {previous_line}): sort the trace by time",
                        durations::seconds_text(at_micros),
                        durations::seconds_text(previous)
                    ),
                ));
            }
        }
        if arrivals.len() >= MAX_ARRIVALS {
            return Err(err(1, format!("more than {MAX_ARRIVALS} requests: split the trace")));
        }
        last = Some((at_micros, line_number));
        arrivals.push(Arrival { at_micros, cost });
    }
    on_bytes(bytes_read);
    Ok(arrivals)
}

fn looks_like_a_number(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-' || c == '+')
}

fn header(fields: &[Field<'_>]) -> Result<Columns, (u64, String)> {
    let mut time = None;
    let mut cost = None;
    for (i, f) in fields.iter().enumerate() {
        let name = f.text.to_ascii_lowercase();
        let found = match name.as_str() {
            "time" | "time_s" | "arrival" => Some((i, TimeUnit::Seconds)),
            "time_us" | "arrival_us" => Some((i, TimeUnit::Micros)),
            "cost" | "permits" => {
                if cost.replace(i).is_some() {
                    return Err((f.column, format!("a second cost column, `{}`", f.text)));
                }
                None
            }
            _ => None,
        };
        if let Some(t) = found {
            if time.replace(t).is_some() {
                return Err((f.column, format!("a second time column, `{}`", f.text)));
            }
        }
    }
    let Some((time, unit)) = time else {
        return Err((
            1,
            format!(
                "the first line is neither a request (a time in seconds) nor a header naming a `time` (seconds) or `time_us` column: `{}`",
                fields.iter().map(|f| f.text).collect::<Vec<_>>().join(",")
            ),
        ));
    };
    Ok(Columns { time, unit, cost, headerless: false })
}

/// Writes `arrivals` as a trace that [`read_csv`] reads back.
pub fn write_csv(arrivals: &[Arrival], mut out: impl std::io::Write) -> std::io::Result<()> {
    writeln!(out, "time,cost")?;
    for a in arrivals {
        writeln!(out, "{},{}", durations::seconds_text(a.at_micros), a.cost)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Arrival>, TraceError> {
        read_csv(text.as_bytes(), |_| {})
    }

    #[test]
    fn reads_with_and_without_a_header() {
        let a = read("0,1\n0.5,3\n\n# a comment\n1.5\n").unwrap();
        assert_eq!(
            a,
            [
                Arrival { at_micros: 0, cost: 1 },
                Arrival { at_micros: 500_000, cost: 3 },
                Arrival { at_micros: 1_500_000, cost: 1 }
            ]
        );
        let a = read("id,cost,time_us\nx,2,10\ny,,20\r\n").unwrap();
        assert_eq!(a, [Arrival { at_micros: 10, cost: 2 }, Arrival { at_micros: 20, cost: 1 }]);
        let a = read("time\n1\n2\n").unwrap();
        assert_eq!(a.len(), 2);
        assert!(read("").unwrap().is_empty());
    }

    #[test]
    fn round_trips() {
        let a = [Arrival { at_micros: 1, cost: 1 }, Arrival { at_micros: 2_000_001, cost: 7 }];
        let mut out = Vec::new();
        write_csv(&a, &mut out).unwrap();
        assert_eq!(read(std::str::from_utf8(&out).unwrap()).unwrap(), a);
    }

    #[test]
    fn errors_have_line_and_column() {
        let e = read("time,cost\n0.1,1\n0.2, x\n").unwrap_err();
        assert_eq!((e.line, e.column), (3, 6));
        assert!(e.message.contains("cost `x`"), "{e}");
        let e = read("0.1\n0.05\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("before the previous request's, 0.100000 s (line 1)"), "{e}");
        let e = read("1.0000001\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
        let e = read("id,cost\n").unwrap_err();
        assert!(e.message.contains("neither a request"), "{e}");
        let e = read("x,time_us\n1,2\n3\n").unwrap_err();
        assert_eq!((e.line, e.column), (3, 2));
        assert!(e.message.contains("`time_us` is field 2"), "{e}");
        let e = read("time,cost\n1,0\n").unwrap_err();
        assert!(e.message.contains("≥ 1"), "{e}");
        let e = read("time,time_us\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 6));
        let e = read_csv(&b"0.1\n0.2,\xff\n"[..], |_| {}).unwrap_err();
        assert_eq!((e.line, e.column, e.message.as_str()), (2, 5, "not UTF-8 text"));
        let e = read("-1\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
    }
}
