//! Tests of the sample strategy in src/strategy.rs: change them (or delete
//! them) with it.

use kit::protocol::{Game, GameStart, Turn};
use kit::strategy::choose;

/// The index `choose` picks among `legal`, with hand 6-6, 6-2, 5-4, seat 0,
/// trains 0 and 1 owned by seats 0 and 1, train 2 the Mexican train.
fn choose_for(legal: &str) -> usize {
    let line = format!(
        r#"{{"id":1,"seat":0,"view":{{"hand":[[6,6],[6,2],[5,4]],"trains":[{{"train":0,"owner":0,"end":6}},{{"train":1,"owner":1,"end":4}},{{"train":2,"owner":-1,"end":6}}]}},"legal":{legal}}}"#
    );
    let turn: Turn = serde_json::from_str(&line).unwrap();
    choose(&turn, &mut Game::new(GameStart::default()))
}

#[test]
fn plays_the_heaviest_tile() {
    assert_eq!(
        choose_for(
            r#"[{"action":"play","tile":[6,2],"train":0},{"action":"play","tile":[5,4],"train":1}]"#
        ),
        1
    );
}

#[test]
fn prefers_its_own_train_when_equal() {
    assert_eq!(
        choose_for(
            r#"[{"action":"play","tile":[5,4],"train":1},{"action":"play","tile":[5,4],"train":0}]"#
        ),
        1
    );
}

#[test]
fn a_double_it_can_follow_counts_a_little_more() {
    // 6-2 follows 6-6: the double beats 7-5 ...
    assert_eq!(
        choose_for(
            r#"[{"action":"play","tile":[7,5],"train":1},{"action":"play","tile":[6,6],"train":2}]"#
        ),
        1
    );
    // ... but not a heavier tile.
    assert_eq!(
        choose_for(
            r#"[{"action":"play","tile":[6,6],"train":2},{"action":"play","tile":[7,6],"train":1}]"#
        ),
        1
    );
}

#[test]
fn never_draws_while_it_can_play() {
    assert_eq!(
        choose_for(r#"[{"action":"play","tile":[1,0],"train":2},{"action":"draw"}]"#),
        0
    );
}

#[test]
fn without_a_play_ends_else_draws_else_passes() {
    assert_eq!(
        choose_for(r#"[{"action":"draw"},{"action":"pass"},{"action":"end"}]"#),
        2
    );
    assert_eq!(choose_for(r#"[{"action":"pass"},{"action":"draw"}]"#), 1);
    assert_eq!(choose_for(r#"[{"action":"pass"}]"#), 0);
}

#[test]
fn announces() {
    assert_eq!(
        choose_for(
            r#"[{"action":"play","tile":[5,4],"train":1,"announce":true},{"action":"play","tile":[5,4],"train":1}]"#
        ),
        0
    );
}
