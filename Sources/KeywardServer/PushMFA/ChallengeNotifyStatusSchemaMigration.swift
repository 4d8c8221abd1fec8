/// Migration 6: the challenge notification names the new status (`<id> <STATUS>`, `<id> DELETED`), so an SSE
/// stream on any node can send it without reading the challenge back: one query fewer per change and per node.
/// A node still running the previous version finds no stream under that payload and falls back to its poll.
enum ChallengeNotifyStatusSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 6, name: "challenge notifications carry the status") { engine in
        guard engine == .postgres else { return [] }
        return [
            """
            CREATE OR REPLACE FUNCTION keyward_push_challenge_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    PERFORM pg_notify('keyward_push_challenges', OLD.id || ' DELETED');
                ELSIF OLD.status IS DISTINCT FROM NEW.status THEN
                    PERFORM pg_notify('keyward_push_challenges', OLD.id || ' ' || NEW.status);
                END IF;
                RETURN NULL;
            END
            $$
            """
        ]
    }
}
