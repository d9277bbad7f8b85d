//! The functions of the hybrid's object by address, read from its ELF symbol table (the
//! file's static functions too, which `dladdr()` does not see): the function of the tree's
//! C a crash happened in, where the model called another (a C `filemap_read()` that
//! reaches a patched `page_cache_async_ra()`). Pure but for the object's load address.

/// An ELF64 little-endian object's function symbols with a size: (value, size, name),
/// each name without gcc's suffix for a clone or a split part (`.constprop.0`, `.cold`).
/// Bytes that are not such an object give none.
pub fn functions(elf: &[u8]) -> Vec<(u64, u64, String)> {
    let u16_at = |at: usize| elf.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u32_at = |at: usize| elf.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize);
    let u64_at = |at: usize| elf.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap()));
    let mut out = Vec::new();
    if elf.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 2, 1][..]) {
        return out;
    }
    let (Some(shoff), Some(shentsize), Some(shnum)) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c)) else {
        return out;
    };
    // A section's (type, offset, size, link, entry size).
    let section = |i: usize| -> Option<(usize, usize, usize, usize, usize)> {
        let at = (shoff as usize).checked_add(i.checked_mul(shentsize)?)?;
        Some((
            u32_at(at + 4)?,
            u64_at(at + 0x18)? as usize,
            u64_at(at + 0x20)? as usize,
            u32_at(at + 0x28)?,
            u64_at(at + 0x38)? as usize,
        ))
    };
    const SHT_SYMTAB: usize = 2;
    const STT_FUNC: u8 = 2;
    for i in 0..shnum {
        let Some((SHT_SYMTAB, off, size, link, entsize)) = section(i) else { continue };
        let Some((_, str_off, str_size, _, _)) = section(link) else { continue };
        let Some(strings) = elf.get(str_off..str_off.saturating_add(str_size)) else { continue };
        for sym in (off..off.saturating_add(size)).step_by(entsize.max(24)) {
            let (Some(name), Some(info), Some(value), Some(len)) =
                (u32_at(sym), elf.get(sym + 4).copied(), u64_at(sym + 8), u64_at(sym + 16))
            else {
                break;
            };
            if info & 0xf != STT_FUNC || len == 0 {
                continue;
            }
            let Some(raw) = strings.get(name..).and_then(|s| s.split(|&b| b == 0).next()) else { continue };
            let raw = String::from_utf8_lossy(raw);
            let name = raw.split('.').next().unwrap_or_default();
            if !name.is_empty() {
                out.push((value, len, name.to_string()));
            }
        }
    }
    out
}

/// Of `functions` loaded at `base`, the one whose code holds address `pc`.
pub fn function_at(functions: &[(u64, u64, String)], base: u64, pc: u64) -> Option<&str> {
    let at = pc.checked_sub(base)?;
    functions.iter().find(|(v, len, _)| (*v..v.saturating_add(*len)).contains(&at)).map(|(_, _, n)| n.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 object: a symbol table of `syms` (name, info, value, size) and its
    /// string table, as sections 1 and 2.
    fn elf(syms: &[(&str, u8, u64, u64)]) -> Vec<u8> {
        let mut strings = vec![0u8];
        let mut table = vec![0u8; 24];
        for (name, info, value, size) in syms {
            let at = strings.len() as u32;
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
            let mut s = [0u8; 24];
            s[..4].copy_from_slice(&at.to_le_bytes());
            s[4] = *info;
            s[8..16].copy_from_slice(&value.to_le_bytes());
            s[16..24].copy_from_slice(&size.to_le_bytes());
            table.extend_from_slice(&s);
        }
        let mut out = vec![0u8; 64];
        out[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1]);
        let (table_at, strings_at) = (64, 64 + table.len());
        let shoff = strings_at + strings.len();
        out[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        out[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        out.extend_from_slice(&table);
        out.extend_from_slice(&strings);
        let header = |kind: u32, off: usize, size: usize, link: u32, entsize: u64| {
            let mut h = [0u8; 64];
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(off as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            h[0x28..0x2c].copy_from_slice(&link.to_le_bytes());
            h[0x38..0x40].copy_from_slice(&entsize.to_le_bytes());
            h
        };
        out.extend_from_slice(&[0u8; 64]);
        out.extend_from_slice(&header(2, table_at, table.len(), 2, 24));
        out.extend_from_slice(&header(3, strings_at, strings.len(), 0, 0));
        out
    }

    #[test]
    fn a_crash_address_names_the_function_whose_code_holds_it_static_or_a_clone_of_one() {
        let object = elf(&[
            ("filemap_read", 0x12, 0x1000, 0x200),
            ("f2fs_mpage_readpages.constprop.0", 0x02, 0x1200, 0x80),
            ("some_data", 0x11, 0x1400, 0x40),
            ("empty", 0x12, 0x1500, 0),
        ]);
        let f = functions(&object);
        assert_eq!(f.len(), 2, "{f:?}");
        let base = 0x7f00_0000_0000;
        assert_eq!(function_at(&f, base, base + 0x1010), Some("filemap_read"));
        assert_eq!(function_at(&f, base, base + 0x1200), Some("f2fs_mpage_readpages"));
        // Past every function, below the object, a data symbol: none.
        for pc in [base + 0x1280, base - 1, base + 0x1410] {
            assert_eq!(function_at(&f, base, pc), None);
        }
        // Bytes that are not an ELF object, or cut short, give nothing (and never panic).
        assert!(functions(b"not an object").is_empty());
        for cut in [10, 70, object.len() - 30] {
            let _ = functions(&object[..cut]);
        }
    }
}
