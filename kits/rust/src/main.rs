//! The bot process: it speaks the protocol on stdin and stdout until `bye` or
//! end of input. The work is done by `kit::protocol::Bot` and
//! `kit::strategy::choose`.

use std::io;

use kit::protocol::{run, Bot};

fn main() {
    let mut bot = Bot::new(kit::strategy::choose, "rust-kit");
    if let Err(err) = run(&mut bot, io::stdin().lock(), io::stdout().lock()) {
        // stdout closed or stdin unreadable: nothing more can be said.
        eprintln!("rust-kit: {err}");
    }
}
