//! The README's "Rolling files" migration table, checked against
//! tracing-appender itself: for each pair of configurations the README
//! puts side by side, both loggers write one line into a directory of
//! their own and must create the same file names.

use std::io::Write;
use std::path::Path;

use nowait::sink::{Rolling, Rotation};
use nowait::{Builder, Level, Sink};
use tracing_appender::rolling::{self, RollingFileAppender};

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    v.sort();
    v
}

fn theirs(dir: &Path, mut appender: RollingFileAppender) -> Vec<String> {
    appender.write_all(b"line\n").unwrap();
    appender.flush().unwrap();
    drop(appender);
    names(dir)
}

fn ours(dir: &Path, rolling: Rolling) -> Vec<String> {
    let (logger, guard) = Builder::new().sink(Sink::rolling(rolling)).build().unwrap();
    logger.log(Level::Info, "line").unwrap();
    drop(guard);
    names(dir)
}

/// Runs one pair, retrying if the period changed between the two writes
/// (a minute boundary in between).
fn same_names(
    theirs_in: impl Fn(&Path) -> RollingFileAppender,
    ours_in: impl Fn(&Path) -> Rolling,
) {
    for _ in 0..3 {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let t = theirs(a.path(), theirs_in(a.path()));
        let o = ours(b.path(), ours_in(b.path()));
        assert_eq!(t.len(), 1, "{t:?}");
        if t == o {
            return;
        }
        eprintln!("names differ ({t:?} / {o:?}); a period boundary? trying again");
    }
    panic!("tracing-appender and nowait name their files differently");
}

#[test]
fn daily_hourly_minutely_weekly_never_name_files_alike() {
    same_names(
        |d| rolling::daily(d, "app.log"),
        |d| Rolling::daily(d, "app.log"),
    );
    same_names(
        |d| rolling::hourly(d, "app.log"),
        |d| Rolling::hourly(d, "app.log"),
    );
    same_names(
        |d| rolling::minutely(d, "app.log"),
        |d| Rolling::minutely(d, "app.log"),
    );
    same_names(
        |d| rolling::weekly(d, "app.log"),
        |d| Rolling::weekly(d, "app.log"),
    );
    same_names(
        |d| rolling::never(d, "app.log"),
        |d| Rolling::never(d, "app.log"),
    );
}

#[test]
fn the_builder_names_files_alike() {
    same_names(
        |d| {
            rolling::Builder::new()
                .rotation(rolling::Rotation::DAILY)
                .filename_prefix("app")
                .filename_suffix("log")
                .max_log_files(7)
                .build(d)
                .unwrap()
        },
        |d| {
            Rolling::new(d)
                .rotation(Rotation::Daily)
                .filename_prefix("app")
                .filename_suffix("log")
                .max_log_files(7)
        },
    );
    // Without a prefix: the period and the suffix.
    same_names(
        |d| {
            rolling::Builder::new()
                .rotation(rolling::Rotation::HOURLY)
                .filename_suffix("log")
                .build(d)
                .unwrap()
        },
        |d| {
            Rolling::new(d)
                .rotation(Rotation::Hourly)
                .filename_suffix("log")
        },
    );
}
