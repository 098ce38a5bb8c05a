//! Archives of the sink's files: making one, and checking that one holds
//! a file.
//!
//! Invariants: an archive is written under a temporary name nobody can
//! guess ahead, created new, with no more permission bits than its file
//! and the sink's mode, synced, then renamed into place without replacing
//! any name; the plain file is removed only once its archive is complete
//! and in place, so a failure never loses data. Reading an archive that
//! anyone may have written is bounded: no more than the plain file's bytes
//! plus one are decoded, and zstd's window is capped.

use std::fs;
use std::io;

use super::plan::Part;
use crate::rolling::Compression;
use crate::sys::nofollow::{Dir, Mode};

/// Attempts at a free temporary name before a compression gives up.
const TMP_TRIES: u32 = 8;

/// A temporary name for `archive` that nobody can guess ahead:
/// `ARCHIVE.TOKEN.tmp`, `TOKEN` 16 random hex digits. Someone else's file
/// at the name (or a planted directory) costs one more try, never the
/// compression.
fn tmp_name(archive: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    // `RandomState`'s keys are random per process and change per call.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{archive}.{:016x}.tmp", h.finish())
}

/// Compresses `plain` (the sink's own file) into `NAME.gz` (or `.zst`)
/// through a temporary name; removes `plain` only once the archive is
/// complete and in place. The archive as it is now.
pub(super) fn compress(dir: &Dir, how: Compression, plain: &Part, mode: Mode) -> io::Result<Part> {
    let archive = format!("{}{}", plain.name, how.extension());
    let mut input = dir.open_regular(&plain.name)?;
    let meta = input.metadata()?;
    if crate::sys::file_id(&input)? != plain.stat.id {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the name was given to another file since it was listed (left alone)",
        ));
    }
    let mode = mode.and(Mode::of(&meta));
    let mut tries = 0;
    let (tmp, out) = loop {
        let tmp = tmp_name(&archive);
        match dir.create_new(&tmp, mode) {
            Ok(out) => break (tmp, out),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries + 1 < TMP_TRIES => {
                tries += 1;
            }
            Err(e) => return Err(e),
        }
    };
    // From here on `tmp` is ours to remove. The archive keeps the time of
    // its last record (what `max_age` and `ls -t` go by).
    let tmp_id = crate::sys::file_id(&out);
    let result = encode(how, &mut input, &out)
        .and_then(|()| out.sync_all())
        .and_then(|()| match meta.modified() {
            Ok(t) => out.set_modified(t),
            Err(_) => Ok(()),
        })
        .and_then(|()| dir.rename_new(&tmp, &archive));
    if let Err(e) = result {
        if let Ok(id) = tmp_id {
            let _ = dir.remove(&tmp, id);
        }
        return Err(e);
    }
    drop(input);
    let stat = dir.stat(&archive)?;
    // If this fails, the next job finds both and removes the plain file.
    dir.remove(&plain.name, plain.stat.id)?;
    Ok(Part {
        name: archive,
        stat,
    })
}

/// Whether the archive `archive` decompresses to exactly the bytes of
/// `plain`. Reads at most as much of `archive` as `plain` holds, plus one
/// byte, whatever it claims; an archive that cannot be opened (not a
/// regular file of this user with one name) or decoded does not hold it.
pub(super) fn holds(dir: &Dir, how: Compression, archive: &str, plain: &str) -> io::Result<bool> {
    /// Reads until `buf` is full or the end.
    fn fill(r: &mut dyn io::Read, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
    let mut plain = dir.open_regular(plain)?;
    let Ok(mut decoded) = dir.open_regular(archive).and_then(|f| decode(how, f)) else {
        return Ok(false);
    };
    let (mut a, mut b) = (vec![0; 64 << 10], vec![0; 64 << 10]);
    loop {
        let n = fill(&mut plain, &mut a)?;
        // At the end of `plain`, one byte more of the archive is a
        // difference.
        let want = n.max(1);
        let Ok(m) = fill(&mut *decoded, &mut b[..want]) else {
            return Ok(false);
        };
        if a[..n] != b[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Writes `input` compressed into `out` (not synced).
fn encode(how: Compression, input: &mut fs::File, out: &fs::File) -> io::Result<()> {
    match how {
        #[cfg(feature = "gzip")]
        Compression::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(
                io::BufWriter::new(out),
                flate2::Compression::default(),
            );
            io::copy(input, &mut enc)?;
            enc.finish()?.into_inner().map_err(|e| e.into_error())?;
            Ok(())
        }
        #[cfg(feature = "zstd")]
        Compression::Zstd => {
            let mut enc = zstd::stream::write::Encoder::new(io::BufWriter::new(out), ZSTD_LEVEL)?;
            io::copy(input, &mut enc)?;
            enc.finish()?.into_inner().map_err(|e| e.into_error())?;
            Ok(())
        }
        #[allow(unreachable_patterns)]
        _ => {
            let _ = (input, out);
            Err(unsupported(how))
        }
    }
}

/// `file`'s bytes, decompressed. The file may be anyone's: the zstd
/// decoder takes no window larger than [`ZSTD_WINDOW_LOG_MAX`] (what it
/// allocates), gzip's is fixed.
pub(super) fn decode(how: Compression, file: fs::File) -> io::Result<Box<dyn io::Read>> {
    match how {
        #[cfg(feature = "gzip")]
        Compression::Gzip => Ok(Box::new(flate2::read::GzDecoder::new(file))),
        #[cfg(feature = "zstd")]
        Compression::Zstd => {
            let mut dec = zstd::stream::read::Decoder::new(file)?;
            dec.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
            Ok(Box::new(dec))
        }
        #[allow(unreachable_patterns)]
        _ => {
            let _ = file;
            Err(unsupported(how))
        }
    }
}

/// zstd's own default level.
#[cfg(feature = "zstd")]
const ZSTD_LEVEL: i32 = 3;

/// The largest window (log2 bytes) the zstd decoder accepts: 16 MiB, above
/// the 2 MiB level 3 uses, far below the 2 GiB a frame may ask for.
#[cfg(feature = "zstd")]
const ZSTD_WINDOW_LOG_MAX: u32 = 24;

/// Unreachable in practice: `build` refuses a compression whose feature
/// is off.
#[allow(dead_code)]
fn unsupported(how: Compression) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("nowait-core was built without the feature for {how:?}"),
    )
}
