//! Feeds every line of every `fixtures/*.jsonl` (lines the referee sent to a
//! seat in a real game) to the protocol helper and the strategy, in memory,
//! and checks each reply. Fails when there are no fixtures.

use std::fs;
use std::path::{Path, PathBuf};

use kit::protocol::{run, Bot, Move};
use serde_json::Value;

fn fixture_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| path.extension().map_or(false, |ext| ext == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    // Never pass on zero fixtures: a missing or empty folder is a failure.
    assert!(
        !files.is_empty(),
        "no fixtures/*.jsonl in {} (`make examples` writes them)",
        dir.display()
    );
    files
}

/// True when `reply` names an entry of `legal`: by index, or spelled out.
fn names_legal_move(reply: &Value, legal: &[Value]) -> bool {
    if let Some(index) = reply.get("index") {
        return index.as_u64().map_or(false, |i| (i as usize) < legal.len());
    }
    let spelled: Move = match serde_json::from_value(reply.clone()) {
        Ok(spelled) => spelled,
        Err(_) => return false,
    };
    legal.iter().any(|entry| {
        let m: Move = match serde_json::from_value(entry.clone()) {
            Ok(m) => m,
            Err(_) => return false,
        };
        let same_tile = match (m.tile, spelled.tile) {
            (Some(a), Some(b)) => a == b || (a.0, a.1) == (b.1, b.0),
            (a, b) => a == b,
        };
        m.action == spelled.action
            && same_tile
            && m.train == spelled.train
            && m.announce == spelled.announce
    })
}

/// Feeds one fixture to a fresh bot; returns how many turns it answered.
fn check_fixture(path: &Path) -> usize {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    assert!(!lines.is_empty(), "{name} is empty");

    let mut bot = Bot::new(kit::strategy::choose, "rust-kit");
    let mut turns = 0;
    let mut bye = false; // a recorded session may end with bye; the fixtures end before it
    for (n, line) in lines.iter().enumerate() {
        let place = format!("{name}:{}", n + 1);
        let msg: Value = serde_json::from_str(line).unwrap();
        let kind = msg["type"].as_str().unwrap_or_default();
        if n == 0 {
            assert_eq!(kind, "hello", "{place}: a fixture starts with hello");
        }
        let out = bot.handle(line);
        match kind {
            "hello" => {
                assert_eq!(out.len(), 1, "{place}: one reply to hello");
                let ready: Value = serde_json::from_str(&out[0]).unwrap();
                assert_eq!(ready["type"], "ready", "{place}");
                assert_eq!(ready["name"], "rust-kit", "{place}");
            }
            "turn" => {
                turns += 1;
                assert_eq!(out.len(), 1, "{place}: one move per turn, got {out:?}");
                let reply: Value = serde_json::from_str(&out[0]).unwrap();
                assert_eq!(reply["type"], "move", "{place}");
                assert_eq!(reply["id"], msg["id"], "{place}: the turn's id");
                let legal = msg["legal"].as_array().unwrap();
                assert!(
                    names_legal_move(&reply, legal),
                    "{place}: {} is not legal",
                    out[0]
                );
            }
            _ => assert!(
                out.is_empty(),
                "{place}: nothing is written for {kind}, got {out:?}"
            ),
        }
        if kind == "bye" {
            bye = true;
            break;
        }
    }
    assert_eq!(bot.finished(), bye, "{name}: finished after bye only");

    // The whole file through run(): it ends at end of input without error,
    // with one line for hello and one for each turn.
    let mut out = Vec::new();
    let mut runner = Bot::new(kit::strategy::choose, "rust-kit");
    run(&mut runner, text.as_bytes(), &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap().lines().count(),
        1 + turns,
        "{name}: lines written by run()"
    );

    // And bye after it: no answer, finished.
    if !bye {
        assert!(bot.handle(r#"{"type":"bye","reason":"done"}"#).is_empty());
        assert!(bot.finished(), "{name}");
    }
    turns
}

#[test]
fn every_fixture_gets_legal_replies() {
    let files = fixture_files();
    let turns: usize = files.iter().map(|f| check_fixture(f)).sum();
    assert!(turns > 0, "the fixtures hold turn requests");
    println!("{} fixtures, {turns} turn requests answered", files.len());
}
