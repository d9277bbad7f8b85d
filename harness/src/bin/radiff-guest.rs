//! Runs inside the VM: `radiff-guest DIR` reads DIR/spec.json and writes its results to
//! DIR; `radiff-guest --batch BATCH` runs BATCH/0, BATCH/1, ... in turn (one boot, several
//! points).

fn main() {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let (batch, dir) = match args.as_slice() {
        [flag, dir] if flag == "--batch" => (true, dir.clone()),
        [dir] => (false, dir.clone()),
        _ => {
            eprintln!("usage: radiff-guest DIR | radiff-guest --batch BATCH   (DIR holds spec.json; started by radiff inside the VM)");
            std::process::exit(2);
        }
    };
    // The same mapping addresses on every run (fault-around depends on them); the points
    // of a batch inherit the setting.
    radiff::guest::reexec_without_aslr();
    let dir = std::path::Path::new(&dir);
    std::process::exit(if batch { radiff::guest::batch(dir) } else { radiff::guest::run_alone(dir) });
}
