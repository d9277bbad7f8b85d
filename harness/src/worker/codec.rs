//! The bytes between radiff and a hybrid worker: a model input going to the worker, a
//! trace coming back. Pure. JSON would do, but a generated scenario's input holds thousands
//! of operations and its trace thousands of windows: JSON cost twice the prediction itself
//! (docs/trust.md). So the bulk goes as LEB128 numbers (folios and requests as distances
//! from the one before), everything small as JSON.
//!
//! Radiff trusts what it sends and checks what comes back: a worker runs anyone's C, so a
//! reply is read field by field, and any byte that is not a trace is an error, never
//! undefined behaviour.

use radiff_model::{Folio, Input, Op, RaState, Request, ScanResult, Submit, Trace, Trigger, Window};

/// A model input's operations as the bytes of their array, for the worker: the worker is
/// this same executable (`/proc/self/exe`), so [`Op`] (plain integers, flags and field-less
/// enums, no pointers: `Copy`) has the same layout on both sides, and radiff is the only
/// writer.
pub fn ops_bytes(ops: &[Op]) -> &[u8] {
    // SAFETY: a slice of plain `Copy` data viewed as its bytes; padding bytes are read as
    // they are (never interpreted).
    unsafe { std::slice::from_raw_parts(ops.as_ptr().cast::<u8>(), std::mem::size_of_val(ops)) }
}

/// The operations [`ops_bytes`] gave, in the worker.
///
/// # Safety
/// `bytes` must be [`ops_bytes`]' output of the same executable image (the worker's
/// parent, which started it from `/proc/self/exe`).
pub unsafe fn ops_from_bytes(bytes: &[u8]) -> Result<Vec<Op>, String> {
    let size = std::mem::size_of::<Op>();
    if !bytes.len().is_multiple_of(size) {
        return Err(format!("{} bytes of operations, not a multiple of {size}", bytes.len()));
    }
    let n = bytes.len() / size;
    let mut ops: Vec<Op> = Vec::with_capacity(n);
    // SAFETY: the caller vouches for the bytes; the destination has room for n ops and
    // does not overlap the source.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), ops.as_mut_ptr().cast::<u8>(), bytes.len());
        ops.set_len(n);
    }
    Ok(ops)
}

/// `input` without its operations (what JSON carries; they go as [`ops_bytes`]).
pub fn without_ops(input: &Input) -> Input {
    let mut rest = input.clone();
    rest.ops = Vec::new();
    rest
}

// --- the trace -----------------------------------------------------------------------------

fn put_u8(out: &mut Vec<u8>, v: u8) {
    out.push(v);
}
/// LEB128: most of a trace's numbers are small, and fewer bytes are less to copy.
#[inline]
fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
fn put_u32(out: &mut Vec<u8>, v: u32) {
    put_u64(out, v as u64);
}
/// A signed number, zigzagged (-1 is 1 byte).
fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_u64(out, ((v << 1) ^ (v >> 63)) as u64);
}
fn put_len(out: &mut Vec<u8>, n: usize) {
    put_u64(out, n as u64);
}

const START: u8 = 0;
const SYNC: u8 = 1;
const ASYNC: u8 = 2;
const FAULT: u8 = 3;
const FAULT_AROUND: u8 = 4;
const COLLAPSE: u8 = 5;
const ORDER: u8 = 0;
const UNBOUNDED: u8 = 1;

/// Appends `trace` to `out`. Each struct is taken apart by name, every field: a field the
/// model adds is a compile error here until the codec carries it.
pub fn encode_trace(trace: &Trace, out: &mut Vec<u8>) {
    let Trace { windows } = trace;
    put_len(out, windows.len());
    for w in windows {
        let Window { file, trigger, index, req_count, ra, submits, folios, requests } = w;
        put_u32(out, *file);
        match trigger {
            Trigger::Start => put_u8(out, START),
            Trigger::Sync => put_u8(out, SYNC),
            Trigger::Async => put_u8(out, ASYNC),
            Trigger::Fault => put_u8(out, FAULT),
            Trigger::FaultAround => put_u8(out, FAULT_AROUND),
            Trigger::Collapse(result) => {
                put_u8(out, COLLAPSE);
                let name = result.name().as_bytes();
                put_u8(out, name.len() as u8);
                out.extend_from_slice(name);
            }
        }
        put_u64(out, *index);
        put_u64(out, *req_count);
        let RaState { start, size, async_size, order, ra_pages, mmap_miss, prev_pos } = ra;
        for v in [*start, *size, *async_size, *ra_pages, *mmap_miss] {
            put_u64(out, v);
        }
        put_i64(out, *prev_pos);
        put_u32(out, *order);
        put_len(out, submits.len());
        for s in submits {
            match *s {
                Submit::Order { index, size, async_size, order } => {
                    put_u8(out, ORDER);
                    put_u64(out, index);
                    put_u64(out, size);
                    put_u64(out, async_size);
                    put_u32(out, order);
                }
                Submit::Unbounded { index, nr_to_read, lookahead_size } => {
                    put_u8(out, UNBOUNDED);
                    put_u64(out, index);
                    put_u64(out, nr_to_read);
                    put_u64(out, lookahead_size);
                }
            }
        }
        // Folios and requests mostly follow one another: each as its distance from the last.
        put_len(out, folios.len());
        let mut last = 0u64;
        for Folio { index, order } in folios {
            put_i64(out, index.wrapping_sub(last) as i64);
            last = *index;
            put_u32(out, *order);
        }
        put_len(out, requests.len());
        let mut last = 0u64;
        for Request { sector, sectors, rwbs } in requests {
            put_i64(out, sector.wrapping_sub(last) as i64);
            last = *sector;
            put_u64(out, *sectors);
            let flags = rwbs.as_bytes();
            put_u8(out, flags.len() as u8);
            out.extend_from_slice(flags);
        }
    }
}

/// Reads what [`encode_trace`] wrote, checking every byte.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("a trace cut short at byte {}", self.at))?;
        let b = &self.bytes[self.at..end];
        self.at = end;
        Ok(b)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    #[inline]
    fn u64(&mut self) -> Result<u64, String> {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = *self.bytes.get(self.at).ok_or_else(|| format!("a trace cut short at byte {}", self.at))?;
            self.at += 1;
            if shift == 63 && b > 1 {
                return Err(format!("a number over 64 bits at byte {}", self.at - 1));
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
            shift += 7;
            if shift > 63 {
                return Err(format!("a number over 64 bits at byte {}", self.at - 1));
            }
        }
    }
    fn u32(&mut self) -> Result<u32, String> {
        let at = self.at;
        u32::try_from(self.u64()?).map_err(|_| format!("a number over 32 bits at byte {at}"))
    }
    fn i64(&mut self) -> Result<i64, String> {
        let z = self.u64()?;
        Ok((z >> 1) as i64 ^ -((z & 1) as i64))
    }
    /// A count of items of at least `min` bytes each: never more than the bytes left hold
    /// (a hostile count allocates nothing).
    fn len(&mut self, min: usize) -> Result<usize, String> {
        let at = self.at;
        let n = usize::try_from(self.u64()?).unwrap_or(usize::MAX);
        if n.saturating_mul(min) > self.bytes.len() - self.at {
            return Err(format!("a count of {n} at byte {at} beyond the trace's end"));
        }
        Ok(n)
    }
    fn text(&mut self) -> Result<&'a str, String> {
        let n = self.u8()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| format!("a name that is not UTF-8 at byte {}", self.at))
    }
}

/// The trace in `bytes` ([`encode_trace`]'s), all of them.
pub fn decode_trace(bytes: &[u8]) -> Result<Trace, String> {
    let mut r = Reader { bytes, at: 0 };
    let n = r.len(1)?;
    let mut windows = Vec::with_capacity(n);
    for _ in 0..n {
        let file = r.u32()?;
        let trigger = match r.u8()? {
            START => Trigger::Start,
            SYNC => Trigger::Sync,
            ASYNC => Trigger::Async,
            FAULT => Trigger::Fault,
            FAULT_AROUND => Trigger::FaultAround,
            COLLAPSE => {
                let name = r.text()?;
                Trigger::Collapse(ScanResult::from_name(name).ok_or_else(|| format!("no scan result `{name}`"))?)
            }
            t => return Err(format!("no trigger {t}")),
        };
        let (index, req_count) = (r.u64()?, r.u64()?);
        let [start, size, async_size, ra_pages, mmap_miss] = [r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?];
        let prev_pos = r.i64()?;
        let ra = RaState { start, size, async_size, order: r.u32()?, ra_pages, mmap_miss, prev_pos };
        let ns = r.len(1)?;
        let mut submits = Vec::with_capacity(ns);
        for _ in 0..ns {
            submits.push(match r.u8()? {
                ORDER => Submit::Order { index: r.u64()?, size: r.u64()?, async_size: r.u64()?, order: r.u32()? },
                UNBOUNDED => Submit::Unbounded { index: r.u64()?, nr_to_read: r.u64()?, lookahead_size: r.u64()? },
                k => return Err(format!("no submission kind {k}")),
            });
        }
        let nf = r.len(2)?;
        let mut folios = Vec::with_capacity(nf);
        let mut last = 0u64;
        for _ in 0..nf {
            let index = last.wrapping_add(r.i64()? as u64);
            last = index;
            folios.push(Folio { index, order: r.u32()? });
        }
        let nr = r.len(3)?;
        let mut requests = Vec::with_capacity(nr);
        let mut last = 0u64;
        for _ in 0..nr {
            let sector = last.wrapping_add(r.i64()? as u64);
            last = sector;
            let sectors = r.u64()?;
            requests.push(Request { sector, sectors, rwbs: r.text()?.into() });
        }
        windows.push(Window { file, trigger, index, req_count, ra, submits, folios, requests });
    }
    if r.at != bytes.len() {
        return Err(format!("{} bytes after the trace", bytes.len() - r.at));
    }
    Ok(Trace { windows })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generated(n: u64) -> Vec<Input> {
        (0..n)
            .filter_map(|i| {
                let gen = crate::explore::generate::generate(9, i);
                gen.scenario(std::path::Path::new("explore"), "codec", "", &[]).ok()
            })
            .map(|s| crate::explore::synthetic_input(&s))
            .collect()
    }

    #[test]
    fn a_trace_comes_back_as_it_went_on_generated_scenarios_and_a_collapse() {
        let inputs = generated(60);
        assert!(inputs.len() > 40);
        for input in &inputs {
            let trace = radiff_model::predict(input, &radiff_model::Policy::BASE);
            let mut bytes = Vec::new();
            encode_trace(&trace, &mut bytes);
            assert_eq!(decode_trace(&bytes).unwrap(), trace);
        }
        let mut w = Window {
            file: 1,
            trigger: Trigger::Collapse(ScanResult::PageLock),
            index: 5,
            req_count: 512,
            ra: RaState { prev_pos: -1, start: u64::MAX, ..Default::default() },
            submits: vec![Submit::Unbounded { index: 1, nr_to_read: 2, lookahead_size: 3 }],
            folios: vec![
                Folio { index: 7, order: 9 },
                Folio { index: 3, order: 0 },
                Folio { index: u64::MAX, order: 1 },
            ],
            requests: vec![
                Request { sector: 8, sectors: 16, rwbs: "RA".into() },
                Request { sector: 0, sectors: u64::MAX, rwbs: "".into() },
            ],
        };
        w.submits.push(Submit::Order { index: 4, size: 5, async_size: 6, order: 7 });
        let trace = Trace { windows: vec![w] };
        let mut bytes = Vec::new();
        encode_trace(&trace, &mut bytes);
        assert_eq!(decode_trace(&bytes).unwrap(), trace);
    }

    #[test]
    fn bytes_that_are_not_a_trace_are_an_error_never_a_huge_allocation() {
        let trace = radiff_model::predict(&generated(3)[0], &radiff_model::Policy::BASE);
        let mut bytes = Vec::new();
        encode_trace(&trace, &mut bytes);
        for cut in [0, 1, 4, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode_trace(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert!(decode_trace(&[0xff, 0xff, 0x7f]).unwrap_err().contains("beyond the trace's end"));
        assert!(decode_trace(&[0xff; 11]).unwrap_err().contains("over 64 bits"));
        let mut more = bytes.clone();
        more.push(0);
        assert!(decode_trace(&more).unwrap_err().contains("after the trace"));
        // A trigger no trace has.
        let mut bad = Vec::new();
        put_len(&mut bad, 1);
        put_u32(&mut bad, 0);
        put_u8(&mut bad, 99);
        assert_eq!(decode_trace(&bad).unwrap_err(), "no trigger 99");
    }

    #[test]
    fn operations_cross_as_their_bytes_and_come_back_equal() {
        for input in generated(20) {
            // SAFETY: the bytes ops_bytes gave, in this same executable.
            let back = unsafe { ops_from_bytes(ops_bytes(&input.ops)) }.unwrap();
            assert_eq!(back, input.ops);
        }
        // SAFETY: a length that is not a multiple is refused before any byte is read.
        assert!(unsafe { ops_from_bytes(&[0u8; 5]) }.is_err());
    }
}
