/// Migration 5: PostgreSQL announces every status change and deletion of a push challenge itself (a trigger
/// calling `pg_notify` on `ChallengeNotificationListener.channel`), so whoever changes a challenge, whichever
/// node or command, every node's SSE streams wake at once, and the notification is sent only if the change
/// commits. SQLite databases have a single node: nothing to add.
enum ChallengeNotifySchemaMigration {
    static let piece = SchemaMigration.Piece(version: 5, name: "challenge change notifications") { engine in
        guard engine == .postgres else { return [] }
        return [
            """
            CREATE FUNCTION keyward_push_challenge_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'DELETE' OR OLD.status IS DISTINCT FROM NEW.status THEN
                    PERFORM pg_notify('keyward_push_challenges', OLD.id);
                END IF;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER push_challenges_changed AFTER UPDATE OF status OR DELETE ON push_challenges
            FOR EACH ROW EXECUTE FUNCTION keyward_push_challenge_changed()
            """,
        ]
    }
}
