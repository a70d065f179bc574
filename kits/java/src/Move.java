import java.util.Map;

/**
 * One entry of a turn's legal list: {@code action} is "play" (with
 * {@code tile} and {@code train}), "draw", "pass" or "end". {@code announce}
 * is set on the announced copy of a play that leaves one tile in hand
 * (rules option announce_one_tile).
 */
public record Move(String action, Tile tile, int train, boolean announce) {
    /** Whether this move plays a tile. */
    public boolean isPlay() {
        return action.equals("play");
    }

    static Move fromJson(Map<String, Object> move) {
        return new Move(
                Json.getString(move, "action", ""),
                Tile.fromJson(move.get("tile")),
                Json.getInt(move, "train", -1),
                Json.getBool(move, "announce", false));
    }
}
