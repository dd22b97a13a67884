//! Evaluates each argument as a CEL expression, with `object` bound to the
//! JSON in `$OBJECT` (or `{}`), and prints the result or the error.
//!
//!     cargo run -p kube-cel --example eval -- "size([1, 2])" "1 / 0"

use kube_cel::{compile, Activation, Budget};

fn main() {
    let object: serde_json::Value = std::env::var("OBJECT")
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    for expr in std::env::args().skip(1) {
        let program = match compile(&expr) {
            Ok(p) => p,
            Err(e) => {
                println!("{expr}\n{e}");
                continue;
            }
        };
        let mut activation = Activation::new();
        activation.bind_json("object", &object);
        let mut budget = Budget::default();
        match program.evaluate(&activation, &mut budget) {
            Ok(v) => println!(
                "{expr} => {v} ({}, cost {})",
                v.type_name(),
                Budget::DEFAULT_LIMIT - budget.remaining()
            ),
            Err(e) => println!("{expr} => error: {e}"),
        }
    }
}
