//! Runs inside the VM: `radiff-guest DIR` reads DIR/spec.json and writes its results to DIR.

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: radiff-guest DIR   (DIR holds spec.json; started by radiff inside the VM)");
        std::process::exit(2);
    };
    // The same mapping addresses on every run (fault-around depends on them).
    radiff::guest::reexec_without_aslr();
    std::process::exit(radiff::guest::main(std::path::Path::new(&dir)));
}
