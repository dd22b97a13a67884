//! Runs the deepest programs the limits allow on a thread with a small
//! stack, to check that the depth limits keep well inside a wasm stack.
//!
//!     cargo run --release -p kube-cel --example stack -- 256

use kube_cel::{compile, Activation, Budget};

fn main() {
    let kib: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(256);
    let deep = kube_cel::MAX_DEPTH - 1;
    let programs = vec![
        format!("{}1{}", "(".repeat(deep), ")".repeat(deep)),
        format!("{}1{}", "-(".repeat(deep / 2), ")".repeat(deep / 2)),
        format!("{}1{}", "[".repeat(deep), "]".repeat(deep)),
        format!(
            "{}true{}",
            "[1].all(x, ".repeat(deep / 3),
            ")".repeat(deep / 3)
        ),
        format!("{}1{}", "size([".repeat(deep / 3), "])".repeat(deep / 3)),
        vec!["1"; deep].join(" + "),
    ];
    let only: Option<usize> = std::env::args().nth(2).and_then(|a| a.parse().ok());
    let programs: Vec<String> = programs
        .into_iter()
        .enumerate()
        .filter(|(i, _)| only.is_none_or(|o| o == *i))
        .map(|(_, p)| p)
        .collect();
    let handle = std::thread::Builder::new()
        .stack_size(kib * 1024)
        .spawn(move || {
            for p in &programs {
                let program = compile(p);
                let result = program.as_ref().map(|prog| {
                    prog.evaluate(&Activation::new(), &mut Budget::default())
                        .map(|v| v.type_name())
                });
                println!("{:.40}… => {:?}", p, result.map_err(|e| e.one_line()));
            }
        })
        .expect("thread starts");
    handle.join().expect("no stack overflow");
}
