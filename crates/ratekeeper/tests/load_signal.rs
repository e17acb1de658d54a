//! The load signals' values and errors, without a machine's files or a
//! thread: `ManualLoad`, the `Smoother`'s average, `SamplerOptions`' checks.

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::load::Smoother;
use ratekeeper::{Argument, Error, LoadSignal, ManualLoad, SamplerOptions, SystemLoad};

const CPU_USAGE: Argument = Argument::CpuUsage;
const LOAD_AVERAGE: Argument = Argument::LoadAverage;
const SAMPLE_INTERVAL: Argument = Argument::SampleInterval;
const DECAY: Argument = Argument::Decay;

#[test]
fn manual_load_says_what_it_is_told() {
    let load = ManualLoad::new();
    assert_eq!((load.cpu_usage(), load.load_average()), (None, None));
    load.set_cpu_usage(0.85).unwrap();
    assert_eq!((load.cpu_usage(), load.load_average()), (Some(0.85), None));
    load.set_load_average(3.5).unwrap();
    assert_eq!((load.cpu_usage(), load.load_average()), (Some(0.85), Some(3.5)));
    for (cpu, avg) in [(0.0, 0.0), (1.0, 1e6), (-0.0, -0.0)] {
        load.set_cpu_usage(cpu).unwrap();
        load.set_load_average(avg).unwrap();
        // A negative zero is stored as zero.
        let (got_cpu, got_avg) = (load.cpu_usage().unwrap(), load.load_average().unwrap());
        assert_eq!((got_cpu.to_bits(), got_avg.to_bits()), ((cpu + 0.0).to_bits(), (avg + 0.0).to_bits()));
    }
    load.clear();
    assert_eq!((load.cpu_usage(), load.load_average()), (None, None));
    assert_eq!(format!("{:?}", ManualLoad::default()), "ManualLoad { cpu_usage: None, load_average: None }");
}

#[test]
fn manual_load_refuses_what_no_machine_reads() {
    let load = ManualLoad::new();
    load.set_cpu_usage(0.5).unwrap();
    load.set_load_average(2.0).unwrap();
    for bad in [f64::NAN, -f64::NAN, -0.01, 1.0000000000000002, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(load.set_cpu_usage(bad), Err(Error::invalid_float(CPU_USAGE, bad)), "{bad}");
    }
    for bad in [f64::NAN, -1e-300, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(load.set_load_average(bad), Err(Error::invalid_float(LOAD_AVERAGE, bad)), "{bad}");
    }
    // A refused value leaves the reading as it was.
    assert_eq!((load.cpu_usage(), load.load_average()), (Some(0.5), Some(2.0)));
    let message = load.set_cpu_usage(1.5).unwrap_err().to_string();
    assert!(message.contains("= 1.5"), "{message}");
}

#[test]
fn a_shared_signal_is_one_signal() {
    let load = Arc::new(ManualLoad::new());
    let as_signal: Arc<dyn LoadSignal> = load.clone();
    let twice: Arc<Arc<dyn LoadSignal>> = Arc::new(as_signal.clone());
    load.set_cpu_usage(0.25).unwrap();
    load.set_load_average(7.0).unwrap();
    assert_eq!((as_signal.cpu_usage(), as_signal.load_average()), (Some(0.25), Some(7.0)));
    assert_eq!((twice.cpu_usage(), twice.load_average()), (Some(0.25), Some(7.0)));

    // Set on one thread, read on another: always a value that was set.
    let writer = {
        let load = Arc::clone(&load);
        std::thread::spawn(move || {
            for i in 0..10_000 {
                load.set_cpu_usage(if i % 2 == 0 { 0.125 } else { 0.875 }).unwrap();
            }
        })
    };
    while !writer.is_finished() {
        let cpu = as_signal.cpu_usage().unwrap();
        assert!(cpu == 0.25 || cpu == 0.125 || cpu == 0.875, "{cpu}");
    }
    writer.join().unwrap();
}

#[test]
fn smoother_is_kratos_average_from_the_first_reading() {
    let s = Smoother::new(0.95).unwrap();
    assert_eq!(s.decay(), 0.95);
    assert_eq!(s.step(None, 0.6), 0.6);
    assert_eq!(s.step(Some(0.6), 1.0), 0.6 * 0.95 + 1.0 * (1.0 - 0.95));
    assert_eq!(s.step(Some(0.6), 0.6), 0.6 * 0.95 + 0.6 * (1.0 - 0.95));
    // From a first reading of full load, the average stays there; Kratos'
    // (from 0) would read 1 - 0.95^n: below 0.8 for 31 samples (15.5 s).
    let mut ours = s.step(None, 1.0);
    let mut from_zero = 0.0;
    let mut samples_below_80 = 0;
    for _ in 0..40 {
        ours = s.step(Some(ours), 1.0);
        from_zero = s.step(Some(from_zero), 1.0);
        samples_below_80 += usize::from(from_zero < 0.8);
        assert_eq!(ours, 1.0);
    }
    assert_eq!(samples_below_80, 31);
    // Decay 0: no smoothing.
    assert_eq!(Smoother::new(0.0).unwrap().step(Some(0.9), 0.1), 0.1);
    for bad in [1.0, 1.5, -0.1, f64::NAN, f64::INFINITY] {
        assert_eq!(Smoother::new(bad), Err(Error::invalid_float(DECAY, bad)), "{bad}");
    }
}

#[test]
fn sampler_options_are_checked() {
    let defaults = SamplerOptions::default();
    assert_eq!((defaults.interval, defaults.decay), (Duration::from_millis(500), 0.95));
    assert_eq!(defaults.root, std::path::Path::new("/"));
    let with =
        |interval, decay| SystemLoad::with_options(SamplerOptions { interval, decay, ..SamplerOptions::default() });
    for (interval, micros) in [(Duration::ZERO, 0), (Duration::from_micros(999), 999), (Duration::MAX, u64::MAX)] {
        assert_eq!(with(interval, 0.95).unwrap_err(), Error::invalid_uint(SAMPLE_INTERVAL, micros), "{interval:?}");
    }
    let over = Duration::from_micros(i64::MAX as u64 + 1);
    assert_eq!(with(over, 0.95).unwrap_err(), Error::invalid_uint(SAMPLE_INTERVAL, i64::MAX as u64 + 1));
    for bad in [1.0, -0.5, f64::NAN] {
        assert_eq!(with(Duration::from_secs(1), bad).unwrap_err(), Error::invalid_float(DECAY, bad), "{bad}");
    }
    // The bounds themselves are valid: 1 ms, i64::MAX µs (never samples
    // again after the first), a decay of 0.
    for (interval, decay) in [(Duration::from_millis(1), 0.0), (Duration::from_micros(i64::MAX as u64), 0.5)] {
        let load = with(interval, decay).unwrap();
        assert_eq!(load.interval(), interval);
    }
}
