//! The bytes between radiff and a hybrid worker: a model input going to the worker, a
//! trace coming back. Pure. JSON would do, but a generated scenario's input holds thousands
//! of operations and its trace thousands of windows: JSON cost twice the prediction itself
//! (docs/trust.md). So the bulk goes as LEB128 numbers (folios and requests as distances
//! from the one before), everything small as JSON.
//!
//! Radiff trusts what it sends and checks what comes back: a worker runs anyone's C, so a
//! reply is read field by field, and any byte that is not a trace is an error, never
//! undefined behaviour.

use radiff_model::trace::Rwbs;
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
    // Field by field: a clone of the whole input would copy its operations to drop them.
    let Input { fs, file_size, extents, queue, mapping, ops: _, folio_pfns, vm, other_files } = input;
    Input {
        fs: *fs,
        file_size: *file_size,
        extents: extents.clone(),
        queue: queue.clone(),
        mapping: *mapping,
        ops: Vec::new(),
        folio_pfns: folio_pfns.clone(),
        vm: vm.clone(),
        other_files: other_files.clone(),
    }
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
    put_u64(out, zigzag(v));
}
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}
fn unzigzag(z: u64) -> i64 {
    (z >> 1) as i64 ^ -((z & 1) as i64)
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
/// A window's head: its trigger in the low bits, then a bit for each of its [`HEAD`]
/// numbers that changed from the window before, then one for each of its lists that is
/// not empty (submissions, folios, requests).
const TRIGGER: u64 = 0b111;
const CHANGED: u32 = 3;
const HEAD: usize = 9;
const HAS: u32 = CHANGED + HEAD as u32;
const LISTS: u32 = 3;
const ORDER: u8 = 0;
const UNBOUNDED: u8 = 1;
/// In place of a request's flags: the same as the request before it in the trace (the
/// first's before is the empty string). No flags are this long ([`Rwbs::CAP`]).
const SAME_FLAGS: u8 = u8::MAX;

/// Appends `trace` to `out`. Each struct is taken apart by name, every field: a field the
/// model adds is a compile error here until the codec carries it.
pub fn encode_trace(trace: &Trace, out: &mut Vec<u8>) {
    let Trace { windows } = trace;
    put_len(out, windows.len());
    // Each window's head as what changed from the window before: a trace's windows are
    // mostly faults, each with its own index and the file's unchanged state.
    let (mut last_head, mut last_index) = ([0u64; HEAD], 0u64);
    let mut last_rwbs = Rwbs::default();
    for w in windows {
        let Window { file, trigger, index, req_count, ra, submits, folios, requests } = w;
        let RaState { start, size, async_size, order, ra_pages, mmap_miss, prev_pos } = ra;
        let head = [
            *file as u64,
            *req_count,
            *start,
            *size,
            *async_size,
            *ra_pages,
            *mmap_miss,
            zigzag(*prev_pos),
            *order as u64,
        ];
        let mut mask = match trigger {
            Trigger::Start => START,
            Trigger::Sync => SYNC,
            Trigger::Async => ASYNC,
            Trigger::Fault => FAULT,
            Trigger::FaultAround => FAULT_AROUND,
            Trigger::Collapse(_) => COLLAPSE,
        } as u64;
        for (i, (v, was)) in head.iter().zip(&last_head).enumerate() {
            mask |= ((v != was) as u64) << (CHANGED + i as u32);
        }
        for (i, n) in [submits.len(), folios.len(), requests.len()].into_iter().enumerate() {
            mask |= ((n != 0) as u64) << (HAS + i as u32);
        }
        put_u64(out, mask);
        if let Trigger::Collapse(result) = trigger {
            let name = result.name().as_bytes();
            put_u8(out, name.len() as u8);
            out.extend_from_slice(name);
        }
        put_i64(out, index.wrapping_sub(last_index) as i64);
        for (v, was) in head.iter().zip(&last_head) {
            if v != was {
                put_u64(out, *v);
            }
        }
        (last_head, last_index) = (head, *index);
        // Each list that is not empty: its length, then its items.
        if !submits.is_empty() {
            put_len(out, submits.len());
        }
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
        if !folios.is_empty() {
            put_len(out, folios.len());
        }
        let mut last = 0u64;
        for Folio { index, order } in folios {
            put_i64(out, index.wrapping_sub(last) as i64);
            last = *index;
            put_u32(out, *order);
        }
        if !requests.is_empty() {
            put_len(out, requests.len());
        }
        let mut last = 0u64;
        for Request { sector, sectors, rwbs } in requests {
            put_i64(out, sector.wrapping_sub(last) as i64);
            last = *sector;
            put_u64(out, *sectors);
            // A trace's requests share a few flag strings: each only where it changes.
            if *rwbs == last_rwbs {
                put_u8(out, SAME_FLAGS);
            } else {
                let flags = rwbs.as_bytes();
                put_u8(out, flags.len() as u8);
                out.extend_from_slice(flags);
                last_rwbs = *rwbs;
            }
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
    #[inline(always)]
    fn u64(&mut self) -> Result<u64, String> {
        // Most numbers of a trace (deltas, orders, lengths) take one byte.
        if let Some(&b) = self.bytes.get(self.at) {
            if b < 0x80 {
                self.at += 1;
                return Ok(b as u64);
            }
        }
        self.u64_long()
    }
    #[inline(never)]
    fn u64_long(&mut self) -> Result<u64, String> {
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
        Ok(unzigzag(self.u64()?))
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
    let (mut last_head, mut last_index) = ([0u64; HEAD], 0u64);
    let mut last_rwbs = Rwbs::default();
    for _ in 0..n {
        let mask = r.u64()?;
        if mask >> (HAS + LISTS) != 0 {
            return Err(format!("a window's head {mask:#x} at byte {}", r.at));
        }
        let trigger = match (mask & TRIGGER) as u8 {
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
        let index = last_index.wrapping_add(r.i64()? as u64);
        for (i, v) in last_head.iter_mut().enumerate() {
            if mask & (1 << (CHANGED + i as u32)) != 0 {
                *v = r.u64()?;
            }
        }
        last_index = index;
        let [file, req_count, start, size, async_size, ra_pages, mmap_miss, prev_pos, order] = last_head;
        let at = r.at;
        let file = u32::try_from(file).map_err(|_| format!("a file over 32 bits before byte {at}"))?;
        let order = u32::try_from(order).map_err(|_| format!("an order over 32 bits before byte {at}"))?;
        let ra = RaState { start, size, async_size, order, ra_pages, mmap_miss, prev_pos: unzigzag(prev_pos) };
        // A list's length, where the head says it is not empty.
        let len = |r: &mut Reader, list: u32, min: usize| match mask & (1 << (HAS + list)) {
            0 => Ok(0),
            _ => r.len(min).and_then(|n| {
                if n == 0 {
                    Err(format!("an empty list marked as not, before byte {}", r.at))
                } else {
                    Ok(n)
                }
            }),
        };
        let ns = len(&mut r, 0, 1)?;
        let mut submits = Vec::with_capacity(ns);
        for _ in 0..ns {
            submits.push(match r.u8()? {
                ORDER => Submit::Order { index: r.u64()?, size: r.u64()?, async_size: r.u64()?, order: r.u32()? },
                UNBOUNDED => Submit::Unbounded { index: r.u64()?, nr_to_read: r.u64()?, lookahead_size: r.u64()? },
                k => return Err(format!("no submission kind {k}")),
            });
        }
        let nf = len(&mut r, 1, 2)?;
        let mut folios = Vec::with_capacity(nf);
        let mut last = 0u64;
        for _ in 0..nf {
            let index = last.wrapping_add(r.i64()? as u64);
            last = index;
            folios.push(Folio { index, order: r.u32()? });
        }
        let nr = len(&mut r, 2, 3)?;
        let mut requests = Vec::with_capacity(nr);
        let mut last = 0u64;
        for _ in 0..nr {
            let sector = last.wrapping_add(r.i64()? as u64);
            last = sector;
            let sectors = r.u64()?;
            if r.bytes.get(r.at) == Some(&SAME_FLAGS) {
                r.at += 1;
            } else {
                last_rwbs = r.text()?.into();
            }
            requests.push(Request { sector, sectors, rwbs: last_rwbs });
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
        // A trigger no trace has; a head with bits no head has; a list marked as not
        // empty whose length is 0.
        let one = |head: u64, rest: &[u8]| {
            let mut bad = Vec::new();
            put_len(&mut bad, 1);
            put_u64(&mut bad, head);
            bad.extend_from_slice(rest);
            decode_trace(&bad).unwrap_err()
        };
        assert_eq!(one(TRIGGER, &[0]), "no trigger 7");
        assert!(one(1 << (HAS + LISTS), &[0]).starts_with("a window's head"), "{}", one(1 << (HAS + LISTS), &[0]));
        assert!(one(u64::from(SYNC) | 1 << (HAS + 1), &[0, 0]).starts_with("an empty list marked as not"));
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
