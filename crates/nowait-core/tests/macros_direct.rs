//! The macros write events of plain values straight into the ring and
//! everything else through the thread's buffer. Random values (every
//! integer range, any f64 bit pattern, any char, strings with escapes,
//! controls and multi-byte characters, up to a few hundred bytes) are
//! logged both ways: once all plain (the direct path), once with one
//! extra `?` field that forces the general path. Apart from that field
//! the lines must be identical, in text and in JSON.
//!
//! One process-wide logger, so everything runs in one test.

use nowait_core::format::{Json, Text};
use nowait_core::{info, Builder, Sink};
use nowait_testkit::{MemoryWriter, Rng};

fn random_string(rng: &mut Rng) -> String {
    const PIECES: [&str; 12] = [
        "a",
        "Z",
        " ",
        "\"",
        "\\",
        "\n",
        "\u{1b}[31m",
        "é",
        "€",
        "🦀",
        "\u{7f}",
        "\t",
    ];
    let len = match rng.below(4) {
        0 => 0,
        1 => rng.below(8),
        2 => rng.below(64),
        _ => rng.below(300),
    };
    (0..len)
        .map(|_| PIECES[rng.below(PIECES.len() as u64) as usize])
        .collect()
}

fn random_char(rng: &mut Rng) -> char {
    loop {
        if let Some(c) = char::from_u32(rng.below(0x11_0000) as u32) {
            return c;
        }
    }
}

#[test]
fn direct_and_general_encodings_format_the_same() {
    let (text, json) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = Builder::new()
        .flush_on_exit(false)
        .sink(Sink::writer(text.clone()).format(Text::new().ansi(false).without_time()))
        .sink(Sink::writer(json.clone()).format(Json::new().without_time()))
        .build()
        .unwrap();
    nowait_core::set_global(logger.clone()).unwrap();

    let mut rng = Rng::new(0xD1EC7);
    let rounds = 3000;
    for _ in 0..rounds {
        let u = rng.next() >> rng.below(64);
        let i = (rng.next() as i64) >> rng.below(64);
        let f = f64::from_bits(rng.next());
        let b = rng.below(2) == 0;
        let c = random_char(&mut rng);
        let s = random_string(&mut rng);
        let small = rng.below(256) as u8;
        let s = s.as_str();
        info!(
            u,
            i, f, b, c, s, small, "m {} {} {} {} {} {} {}", u, i, f, b, c, s, small
        );
        info!(u, i, f, b, c, s, small, z = ?(), "m {} {} {} {} {} {} {}", u, i, f, b, c, s, small);
        logger.flush().unwrap();
    }
    assert_eq!(logger.stats().records_written, 2 * rounds);

    let text = text.take();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 * rounds as usize);
    for pair in lines.chunks(2) {
        let general = pair[1]
            .strip_suffix(" z=()")
            .unwrap_or_else(|| panic!("no z field: {:?}", pair[1]));
        assert_eq!(pair[0], general);
    }
    let json = json.take();
    let lines: Vec<&str> = json.lines().collect();
    assert_eq!(lines.len(), 2 * rounds as usize);
    for pair in lines.chunks(2) {
        let general = pair[1].replacen(r#","z":"()""#, "", 1);
        assert_ne!(general, pair[1], "no z field: {:?}", pair[1]);
        assert_eq!(pair[0], general);
    }
}
