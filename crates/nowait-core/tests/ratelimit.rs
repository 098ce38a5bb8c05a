use nowait_core::{info, warn, Builder, Sink, Text};
use nowait_testkit::MemoryWriter;

#[test]
fn smoke() {
    let text = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        .sink(Sink::writer(text.clone()).format(Text::new().ansi(false).with_time(false)))
        .build()
        .unwrap();
    nowait_core::set_global(logger.clone()).unwrap();
    for i in 0..10 {
        warn!(limit = 2 per 1s, i, "hot {}", i);
        info!(target: "x", sample = 1 in 3, "s");
    }
    logger.flush().unwrap();
    println!("{}", text.text());
    println!("{:?}", logger.stats());
}
