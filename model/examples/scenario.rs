//! Runs the model on an `Input` given as JSON (stdin) and prints each window with the
//! model's notes: `cargo run -p radiff-model --example scenario [variant] < input.json`.

use std::io::Read;

use radiff_model::*;

fn main() {
    let variant = std::env::args().nth(1).unwrap_or_else(|| "base".into());
    let policy = Policy::for_variant(&variant).expect("unknown variant");
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).unwrap();
    let input: Input = serde_json::from_str(&text).expect("an Input as JSON");
    let ex = explain(&input, &policy, &ModelConfig::default());
    for (i, (w, n)) in ex.trace.windows.iter().zip(&ex.notes).enumerate() {
        println!(
            "#{i} op {} fd {} {:?} index {} req_count {} ra size {} async {} order {} prev_pos {}",
            n.op, n.fd, w.trigger, w.index, w.req_count, w.ra.size, w.ra.async_size, w.ra.order, w.ra.prev_pos
        );
        for s in &n.steps {
            println!("    {s}");
        }
        println!("    submits {:?}", w.submits);
        println!("    folios {:?}", w.folios.iter().map(|f| (f.index, f.order)).collect::<Vec<_>>());
        println!(
            "    requests {:?} segments {:?}",
            w.requests.iter().map(|r| (r.sector, r.sectors, r.rwbs.as_str())).collect::<Vec<_>>(),
            n.segments
        );
        println!(
            "    ra after: start {} size {} async {} order {}",
            n.ra_after.start, n.ra_after.size, n.ra_after.async_size, n.ra_after.order
        );
    }
}
