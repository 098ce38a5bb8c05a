//! Directive parsing and matching, and a comparison with
//! `tracing_subscriber::EnvFilter`'s decisions on random inputs.

use nowait_testkit::Rng;

use super::{Filter, FilterError};
use crate::level::Level;

fn f(s: &str) -> Filter {
    Filter::parse(s).unwrap()
}

#[test]
fn the_issue_example() {
    let filter = f("info,hyper=warn,my_app::db=debug");
    assert!(filter.enabled("my_app", Level::Info));
    assert!(!filter.enabled("my_app", Level::Debug));
    assert!(filter.enabled("my_app::db", Level::Debug));
    assert!(filter.enabled("my_app::db::pool", Level::Debug));
    assert!(!filter.enabled("my_app::db", Level::Trace));
    assert!(!filter.enabled("hyper", Level::Info));
    assert!(filter.enabled("hyper::proto::h1", Level::Warn));
    assert!(!filter.enabled("hyper::proto::h1", Level::Info));
    assert_eq!(filter.max_level(), Some(Level::Debug));
}

#[test]
fn prefixes_match_on_module_boundaries_only() {
    let filter = f("warn,hyper=trace");
    assert!(filter.enabled("hyper::client", Level::Trace));
    assert!(!filter.enabled("hyperlocal", Level::Info));
    assert!(!filter.enabled("hyper_util::rt", Level::Info));
    // `my_app::d` is not a module of `my_app::db`.
    let filter = f("error,my_app::d=trace");
    assert!(!filter.enabled("my_app::db", Level::Info));
}

#[test]
fn most_specific_wins_whatever_the_order() {
    for s in ["a=error,a::b=trace", "a::b=trace,a=error"] {
        let filter = f(s);
        assert!(filter.enabled("a::b::c", Level::Trace), "{s}");
        assert!(!filter.enabled("a::x", Level::Warn), "{s}");
        assert!(!filter.enabled("b", Level::Error), "{s}: unmatched is off");
    }
    // The later of two directives for one target wins.
    assert!(f("a=trace,a=warn").enabled("a", Level::Warn));
    assert!(!f("a=trace,a=warn").enabled("a", Level::Info));
}

#[test]
fn off_bare_targets_case_and_numbers() {
    let filter = f("debug,noisy=off");
    assert!(!filter.enabled("noisy::x", Level::Error));
    assert!(filter.enabled("quiet", Level::Debug));
    let filter = f("off,app");
    assert!(filter.enabled("app::x", Level::Trace));
    assert!(!filter.enabled("lib", Level::Error));
    assert_eq!(f("off").max_level(), None);
    assert_eq!(f("").max_level(), None, "an empty list enables nothing");
    assert!(f("WARN,App=Debug").enabled("App", Level::Debug));
    assert!(
        !f("WARN,App=Debug").enabled("app", Level::Debug),
        "targets are case-sensitive"
    );
    assert_eq!(f("3"), f("info"));
    assert_eq!(f("0"), f("off"));
    assert_eq!(f("x=5"), f("x=trace"));
    assert_eq!(f(" info , db=debug ,"), f("info,db=debug"));
    assert_eq!(
        f("info,a=debug,a::b=off").to_string(),
        "a::b=off,a=debug,info"
    );
    assert_eq!(Filter::level(Level::Warn), f("warn"));
}

#[test]
fn invalid_directives_are_named() {
    for (s, bad, why) in [
        ("info,hyper=loud", "hyper=loud", "unknown level \"loud\""),
        ("=debug", "=debug", "missing target"),
        ("a=b=c", "a=b=c", "unknown level"),
        ("a=", "a=", "unknown level \"\""),
        ("app[{user}]=debug", "app[{user}]=debug", "not supported"),
        (
            "info,my app=debug",
            "my app=debug",
            "unexpected character ' '",
        ),
        ("a\u{1b}[31m", "a\u{1b}[31m", "not supported"),
    ] {
        let err = Filter::parse(s).unwrap_err();
        let FilterError::Directive { directive, reason } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(directive, bad, "{s}");
        assert!(reason.contains(why), "{s}: {reason}");
        // The message names the directive, escaped.
        let text = err.to_string();
        assert!(text.contains(&format!("{bad:?}")), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
    }
}

#[test]
fn lossy_keeps_the_valid_directives() {
    let (filter, errors) = Filter::parse_lossy("warn,db=loud,app=debug,x=y=z");
    assert_eq!(filter, f("warn,app=debug"));
    assert_eq!(errors.len(), 2);
    assert!(errors[0].to_string().contains("db=loud"));
}

// === comparison with EnvFilter ===

/// Whole module names of one length: a directive target is then a string
/// prefix of a record's target exactly when it is a prefix on a `::`
/// boundary, where EnvFilter (plain prefixes) and nowait must agree.
const SEGMENTS: [&str; 4] = ["ab", "cd", "ef", "gh"];
const LEVELS: [&str; 6] = ["trace", "debug", "info", "warn", "error", "off"];

fn random_target(rng: &mut Rng) -> String {
    let n = 1 + rng.below(3) as usize;
    (0..n)
        .map(|_| SEGMENTS[rng.below(4) as usize])
        .collect::<Vec<_>>()
        .join("::")
}

fn random_directives(rng: &mut Rng) -> String {
    let n = 1 + rng.below(5);
    (0..n)
        .map(|_| match rng.below(4) {
            0 => LEVELS[rng.below(6) as usize].to_string(),
            1 => random_target(rng),
            _ => format!("{}={}", random_target(rng), LEVELS[rng.below(6) as usize]),
        })
        .collect::<Vec<_>>()
        .join(",")
}

struct Dummy;
static DUMMY: Dummy = Dummy;
static DUMMY_META: tracing_core::Metadata<'static> = tracing_core::metadata! {
    name: "dummy",
    target: "dummy",
    level: tracing_core::Level::INFO,
    fields: &[],
    callsite: &DUMMY,
    kind: tracing_core::metadata::Kind::EVENT,
};

impl tracing_core::Callsite for Dummy {
    fn set_interest(&self, _: tracing_core::Interest) {}
    fn metadata(&self) -> &tracing_core::Metadata<'_> {
        &DUMMY_META
    }
}

fn tracing_level(level: Level) -> tracing_core::Level {
    match level {
        Level::Trace => tracing_core::Level::TRACE,
        Level::Debug => tracing_core::Level::DEBUG,
        Level::Info => tracing_core::Level::INFO,
        Level::Warn => tracing_core::Level::WARN,
        Level::Error => tracing_core::Level::ERROR,
    }
}

#[test]
#[cfg_attr(miri, ignore = "hundreds of EnvFilters: slow under Miri")]
fn agrees_with_env_filter() {
    use tracing_core::Subscriber;
    use tracing_subscriber::layer::SubscriberExt;

    let mut rng = Rng::new(0x9_2026);
    let targets: Vec<&'static str> = (0..64)
        .map(|_| &*Box::leak(random_target(&mut rng).into_boxed_str()))
        .collect();
    let metas: Vec<tracing_core::Metadata<'static>> = targets
        .iter()
        .flat_map(|&target| {
            Level::ALL.into_iter().map(move |level| {
                tracing_core::Metadata::new(
                    "event",
                    target,
                    tracing_level(level),
                    None,
                    None,
                    None,
                    tracing_core::field::FieldSet::new(
                        &[],
                        tracing_core::identify_callsite!(&DUMMY),
                    ),
                    tracing_core::metadata::Kind::EVENT,
                )
            })
        })
        .collect();
    let mut checked = 0;
    for _ in 0..300 {
        let directives = random_directives(&mut rng);
        let ours = f(&directives);
        let env = tracing_subscriber::EnvFilter::builder()
            .parse(&directives)
            .unwrap();
        let max = env.max_level_hint();
        let subscriber = tracing_subscriber::registry().with(env);
        for (i, meta) in metas.iter().enumerate() {
            let level = Level::ALL[i % 5];
            let target = targets[i / 5];
            assert_eq!(
                ours.enabled(target, level),
                subscriber.enabled(meta),
                "{directives:?} on {target} at {level}"
            );
            checked += 1;
        }
        // EnvFilter's hint is an upper bound (it keeps the level of a
        // directive replaced by a later one for the same target); ours is
        // exact: each kept directive decides for its own target.
        let ours_max = ours.max_level().map(tracing_level);
        let env_max = max.and_then(|m| m.into_level());
        assert!(
            ours_max <= env_max,
            "max level of {directives:?}: {ours_max:?} {env_max:?}"
        );
        for (i, meta) in metas.iter().enumerate() {
            if subscriber.enabled(meta) {
                let level = Level::ALL[i % 5];
                assert!(
                    ours.max_level().is_some_and(|m| level >= m),
                    "{directives:?} {meta:?}"
                );
            }
        }
    }
    assert_eq!(checked, 300 * 64 * 5);
}

/// The word-at-a-time pre-check in `Directives::min_for` gives the answer
/// a plain scan of `Directive::matches` gives, on targets shorter than,
/// exactly as long as and longer than its eight-byte head, sharing
/// prefixes with the directives, with NUL and multi-byte characters.
#[test]
fn head_check_agrees_with_a_plain_scan() {
    let pieces = [
        "a", "ab", "abcdefgh", "abcdefg", "my_app", "db", "::", "\0", "é", "x",
    ];
    let mut rng = Rng::new(9);
    let make = |rng: &mut Rng| {
        let n = 1 + rng.below(4) as usize;
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(pieces[rng.below(pieces.len() as u64) as usize]);
        }
        s
    };
    for _ in 0..300 {
        let mut list = Vec::new();
        for _ in 0..1 + rng.below(5) {
            let target = make(&mut rng);
            if let Ok(d) = super::directive::Directive::parse(&format!("{target}=debug")) {
                list.push(d);
            }
        }
        let directives = super::directive::Directives::new(list);
        for _ in 0..50 {
            let target = make(&mut rng);
            let plain = directives
                .iter()
                .find(|d| d.matches(&target))
                .map(|d| d.min);
            assert_eq!(
                directives.min_for(&target),
                plain,
                "{target:?} in {directives:?}"
            );
        }
    }
}

// === limits ===

/// `n` directives for distinct targets of one length, `t00000=debug,...`.
fn many(n: usize) -> String {
    (0..n)
        .map(|i| format!("t{i:05}=debug"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A list of the most directives a filter may have parses, and means what
/// it says; one more is refused with an error naming the limit, by
/// `parse`, `reload` and (keeping the first `MAX_DIRECTIVES`)
/// `parse_lossy`. Empty items do not count.
#[test]
fn directive_count_is_capped() {
    let max = Filter::MAX_DIRECTIVES;
    let full = format!("warn,{},,{}", many(max - 2), "last=trace");
    let filter = f(&full);
    assert!(filter.enabled("t00000::x", Level::Debug));
    assert!(filter.enabled(&format!("t{:05}", max - 3), Level::Debug));
    assert!(!filter.enabled(&format!("t{:05}", max - 2), Level::Debug));
    assert!(filter.enabled("last", Level::Trace));
    assert!(filter.enabled("other", Level::Warn));

    let over = format!("{full},one=info");
    let err = Filter::parse(&over).unwrap_err();
    assert_eq!(err, FilterError::TooManyDirectives { max });
    let text = err.to_string();
    assert!(text.contains(&max.to_string()), "{text}");
    assert_eq!(super::FilterHandle::new().reload(&over), Err(err.clone()));
    let (lossy, errors) = Filter::parse_lossy(&over);
    assert_eq!(lossy, filter);
    assert_eq!(errors, [err]);
}

/// A target longer than `MAX_TARGET_LEN` bytes is refused, as written
/// or bare, with an error that shows only its start; one of exactly that
/// length parses, and the filter's `Display` form parses back.
#[test]
fn target_length_is_capped() {
    let max = Filter::MAX_TARGET_LEN;
    let target = "a".repeat(max);
    let filter = f(&target);
    assert!(filter.enabled(&target, Level::Trace));
    assert_eq!(f(&filter.to_string()), filter);
    let long = format!("x{target}");
    for directive in [format!("{long}=info"), long.clone()] {
        let err = Filter::parse(&format!("warn,{directive}")).unwrap_err();
        let FilterError::TargetTooLong { start, len, max: m } = &err else {
            panic!("{err:?}");
        };
        assert_eq!((*len, *m), (max + 1, max));
        assert!(
            long.starts_with(start.as_str()) && start.len() < 64,
            "{start}"
        );
        assert!(err.to_string().len() < 200, "{err}");
        let (lossy, errors) = Filter::parse_lossy(&format!("warn,{directive},db=debug"));
        assert_eq!(lossy, f("warn,db=debug"));
        assert_eq!(errors, [err]);
    }
}

/// Of two directives for one target the later wins, in the place of the
/// first among equally specific ones (the order `Display` shows).
#[test]
fn later_duplicate_keeps_the_first_place() {
    assert_eq!(f("b=info,a=warn,b=debug").to_string(), "b=debug,a=warn");
    assert_eq!(f("info,x=warn,debug").to_string(), "x=warn,debug");
    let filter = f(&format!(
        "{},{}",
        many(100),
        many(100).replace("debug", "error")
    ));
    assert!(!filter.enabled("t00042", Level::Warn));
    assert!(filter.enabled("t00042", Level::Error));
    assert_eq!(filter.to_string().matches(',').count(), 99);
}
