//! The one syntax of `--limiter` and `--pattern` arguments:
//! `NAME:key=value,key=value` (or `NAME` alone).
//!
//! This module owns the splitting and the typed reading of values; which
//! names and keys exist belongs to [`limiters`](crate::limiters) and
//! [`patterns`](crate::patterns). Every error names the argument, the key
//! and the value, so that a typo on the command line is found at once.

use std::collections::BTreeMap;
use std::fmt;

use crate::durations;

/// A parsed `NAME:key=value,…`: the name and its parameters, each key
/// once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecText {
    /// The whole argument as given (for error messages and labels).
    pub text: String,
    /// The part before the colon.
    pub name: String,
    params: BTreeMap<String, String>,
}

/// What is wrong with a `--limiter` or `--pattern` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The argument as given.
    pub text: String,
    /// What is wrong, naming the key and value.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.text, self.message)
    }
}

impl std::error::Error for SpecError {}

impl SpecText {
    /// Splits `text` into its name and parameters. Errors on an empty name,
    /// a parameter without `=`, an empty key, or a key given twice.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let err = |message: String| SpecError { text: text.to_owned(), message };
        let (name, rest) = match text.split_once(':') {
            Some((name, rest)) => (name.trim(), Some(rest)),
            None => (text.trim(), None),
        };
        if name.is_empty() {
            return Err(err("no name before the parameters (expected NAME:key=value,...)".into()));
        }
        let mut params = BTreeMap::new();
        if let Some(rest) = rest {
            for item in rest.split(',') {
                let item = item.trim();
                if item.is_empty() {
                    continue;
                }
                let Some((key, value)) = item.split_once('=') else {
                    return Err(err(format!("`{item}` is not key=value")));
                };
                let (key, value) = (key.trim(), value.trim());
                if key.is_empty() {
                    return Err(err(format!("`{item}` has no key")));
                }
                if params.insert(key.to_owned(), value.to_owned()).is_some() {
                    return Err(err(format!("`{key}` is given twice")));
                }
            }
        }
        Ok(SpecText { text: text.to_owned(), name: name.to_owned(), params })
    }

    fn error(&self, message: String) -> SpecError {
        SpecError { text: self.text.clone(), message }
    }

    /// Errors unless every key is one of `known`.
    pub fn only_keys(&self, known: &[&str]) -> Result<(), SpecError> {
        match self.params.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => {
                Err(self.error(format!("unknown parameter `{k}` for {} (known: {})", self.name, known.join(", "))))
            }
        }
    }

    /// The raw value of `key`, if given.
    pub fn raw(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }

    fn required(&self, key: &str) -> Result<&str, SpecError> {
        self.raw(key).ok_or_else(|| self.error(format!("{} needs `{key}=`", self.name)))
    }

    fn typed<T>(&self, key: &str, what: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Option<T>, SpecError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => parse(v).map(Some).ok_or_else(|| self.error(format!("{key} = `{v}` is not {what}"))),
        }
    }

    /// A whole number (`1000`, `1_000`), if given.
    pub fn count(&self, key: &str) -> Result<Option<u64>, SpecError> {
        self.typed(key, "a whole number ≥ 0", parse_count)
    }

    /// A whole number that must be given.
    pub fn required_count(&self, key: &str) -> Result<u64, SpecError> {
        self.required(key)?;
        self.count(key).map(|v| v.unwrap_or_default())
    }

    /// A real number (`100`, `0.5`, `1e9`, `inf`), if given.
    pub fn number(&self, key: &str) -> Result<Option<f64>, SpecError> {
        self.typed(key, "a number", |v| v.replace('_', "").parse::<f64>().ok().filter(|x| !x.is_nan()))
    }

    /// A real number that must be given.
    pub fn required_number(&self, key: &str) -> Result<f64, SpecError> {
        self.required(key)?;
        self.number(key).map(|v| v.unwrap_or_default())
    }

    /// A duration (`1s`, `250ms`, `1.5s`, `100us`, `2m`, `1h`; a bare number
    /// is seconds) in whole microseconds, if given.
    pub fn duration(&self, key: &str) -> Result<Option<i64>, SpecError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => {
                durations::parse_duration_micros(v).map(Some).map_err(|m| self.error(format!("{key} = `{v}`: {m}")))
            }
        }
    }

    /// A duration that must be given.
    pub fn required_duration(&self, key: &str) -> Result<i64, SpecError> {
        self.required(key)?;
        self.duration(key).map(|v| v.unwrap_or_default())
    }

    /// An error about this argument (for checks the caller makes).
    pub fn invalid(&self, message: impl Into<String>) -> SpecError {
        self.error(message.into())
    }
}

/// A whole number, with optional `_` separators.
pub(crate) fn parse_count(v: &str) -> Option<u64> {
    let digits: String = v.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_name_and_parameters() {
        let s = SpecText::parse("fixed_window:limit=100, window=1s").unwrap();
        assert_eq!(s.name, "fixed_window");
        assert_eq!(s.required_count("limit").unwrap(), 100);
        assert_eq!(s.required_duration("window").unwrap(), 1_000_000);
        assert_eq!(s.count("missing").unwrap(), None);
        assert_eq!(SpecText::parse("guava").unwrap().name, "guava");
    }

    #[test]
    fn errors_name_the_key_and_value() {
        assert!(SpecText::parse(":limit=1").unwrap_err().message.contains("no name"));
        assert!(SpecText::parse("a:limit").unwrap_err().message.contains("`limit` is not key=value"));
        assert!(SpecText::parse("a:=3").unwrap_err().message.contains("no key"));
        assert!(SpecText::parse("a:x=1,x=2").unwrap_err().message.contains("`x` is given twice"));
        let s = SpecText::parse("a:limit=ten,window=1 parsec").unwrap();
        assert_eq!(
            s.count("limit").unwrap_err().to_string(),
            "`a:limit=ten,window=1 parsec`: limit = `ten` is not a whole number ≥ 0"
        );
        assert!(s.duration("window").unwrap_err().message.starts_with("window = `1 parsec`"));
        assert!(s.required_count("burst").unwrap_err().message.contains("a needs `burst=`"));
        assert!(s.only_keys(&["limit"]).unwrap_err().message.contains("unknown parameter `window`"));
        assert!(s.number("limit").is_err());
        assert!(SpecText::parse("a:r=nan").unwrap().number("r").is_err());
        assert_eq!(SpecText::parse("a:r=inf").unwrap().number("r").unwrap(), Some(f64::INFINITY));
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("1_000"), Some(1000));
        assert_eq!(parse_count("-1"), None);
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("18446744073709551616"), None);
    }
}
