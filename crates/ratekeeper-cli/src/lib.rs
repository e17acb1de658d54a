//! The `ratekeeper` command-line tool, as a library so that its tests can
//! check the numbers behind what it prints and draws.
//!
//! `ratekeeper simulate` replays a traffic trace ([`trace`], a CSV file, or
//! [`patterns`] generated on the spot) through limiters ([`limiters`]) on a
//! manual clock ([`simulation`]), writes every decision ([`decisions`]),
//! summarises them ([`summary`]) and draws them ([`plot`]).
#![warn(missing_docs)]

pub mod decisions;
pub mod durations;
pub mod limiters;
pub mod patterns;
pub mod plot;
pub mod progress;
pub mod server;
pub mod simulation;
pub mod spec_syntax;
pub mod summary;
pub mod trace;
