//! The CLI's trace reader (`ratekeeper_cli::trace::read_csv`) on any bytes
//! at all.
//!
//! A trace is user input: `ratekeeper simulate --trace FILE` must answer
//! any file with the requests it holds or with an error that says where
//! (line and column) and what — never a panic. Beyond that, for every
//! input:
//!
//! * an error is about the first bad line: every line before it reads
//!   cleanly on its own, and its line and column lie within the input
//!   (the column at most one past the line's last character);
//! * what is read is a trace: times from 0 and never going back, costs of
//!   at least 1, no more requests than lines; and it reads back the same
//!   after [`write_csv`](ratekeeper_cli::trace::write_csv);
//! * the answer does not depend on how the bytes arrive (a reader that
//!   hands them over a few at a time gives the same), and the progress
//!   callback ends on the number of bytes read.

use std::io::{BufReader, Read};

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper_cli::trace::{read_csv, write_csv, Arrival, TraceError};

/// A trace: bytes that mostly look like one, and how to hand them over.
#[derive(Debug)]
pub struct Input {
    bytes: Vec<u8>,
    /// The capacity of the buffered reader for the second reading.
    chunk: usize,
}

/// Pieces a trace is made of, so that the fuzzer gets past the header and
/// the number syntax often; arbitrary bytes between them.
const PIECES: [&[u8]; 24] = [
    b",",
    b"\n",
    b"\r\n",
    b"\r",
    b"time,cost\n",
    b"time_us,cost\n",
    b"id,permits,arrival\n",
    b"time,time\n",
    b"cost,cost,time\n",
    b"#",
    b".",
    b"-",
    b"+",
    b" ",
    b"\t",
    b"0",
    b"1",
    b"0.000001",
    b"1.5",
    b"9223372036854.775807",
    b"9223372036854775807",
    b"18446744073709551616",
    b"\xef\xbb\xbf",
    b"\xff",
];

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let chunk = u.int_in_range(1usize..=16)?;
        let mut bytes = Vec::new();
        if u.ratio(1u8, 4)? {
            // Raw bytes, as libFuzzer mutates them.
            let n = u.len();
            bytes.extend_from_slice(u.bytes(n)?);
        } else {
            while !u.is_empty() && bytes.len() < 4_096 {
                match u.int_in_range(0u8..=3)? {
                    0 => bytes.extend_from_slice(u.choose(&PIECES)?),
                    1 => bytes.extend_from_slice(u.int_in_range(0u64..=5_000_000)?.to_string().as_bytes()),
                    2 => {
                        let n = u.int_in_range(0usize..=4)?;
                        bytes.extend_from_slice(u.bytes(n)?);
                    }
                    _ => {
                        let (s, us) = (u.int_in_range(0u32..=100)?, u.int_in_range(0u32..=999_999)?);
                        bytes.extend_from_slice(format!("{s}.{us:06},{}\n", u.int_in_range(0u8..=5)?).as_bytes());
                    }
                }
            }
        }
        Ok(Input { bytes, chunk })
    }
}

/// A reader that hands over at most `chunk` bytes per read.
struct Trickle<'a> {
    rest: &'a [u8],
    chunk: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.len().min(self.chunk).min(buf.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

/// The lines of `bytes` as the reader counts them (split after each
/// `\n`), without their line ends.
fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    for line in &mut lines {
        while let [rest @ .., b'\n' | b'\r'] = line {
            *line = rest;
        }
    }
    lines
}

fn read(bytes: &[u8]) -> core::result::Result<Vec<Arrival>, TraceError> {
    let mut progress = None;
    let read = read_csv(bytes, |n| progress = Some(n));
    if read.is_ok() {
        assert_eq!(progress, Some(bytes.len() as u64), "the progress did not end on the bytes read");
    }
    read
}

/// Reads the trace and checks what it says.
pub fn run(input: Input) {
    let bytes = &input.bytes[..];
    let lines = lines(bytes);
    let first = read(bytes);
    let trickled = read_csv(BufReader::with_capacity(input.chunk, Trickle { rest: bytes, chunk: input.chunk }), |_| {});
    assert_eq!(first, trickled, "read whole and read {} bytes at a time differ", input.chunk);
    match first {
        Ok(arrivals) => {
            assert!(arrivals.len() <= lines.len(), "{} requests from {} lines", arrivals.len(), lines.len());
            assert!(arrivals.iter().all(|a| a.at_micros >= 0 && a.cost >= 1), "{arrivals:?}");
            assert!(arrivals.windows(2).all(|w| w[0].at_micros <= w[1].at_micros), "time went back: {arrivals:?}");
            let mut written = Vec::new();
            write_csv(&arrivals, &mut written).expect("writing to memory");
            assert_eq!(read(&written), Ok(arrivals), "a trace did not read back as written");
        }
        Err(e) => {
            assert!(!e.message.is_empty());
            let shown = e.to_string();
            assert!(shown.starts_with(&format!("line {}, column {}: ", e.line, e.column)), "{shown}");
            let line = usize::try_from(e.line).unwrap();
            assert!((1..=lines.len()).contains(&line), "line {line} of {}: {shown}", lines.len());
            let text = String::from_utf8_lossy(lines[line - 1]);
            let most = text.chars().count() as u64 + 1;
            assert!(
                (1..=most).contains(&e.column),
                "column {} of a line of {} characters: {shown}",
                e.column,
                most - 1
            );
            // The first bad line: what comes before it reads cleanly.
            let before: usize = bytes.split_inclusive(|&b| b == b'\n').take(line - 1).map(<[u8]>::len).sum();
            if let Err(earlier) = read(&bytes[..before]) {
                panic!("reported {shown}, but the lines before it fail too: {earlier}");
            }
        }
    }
}
