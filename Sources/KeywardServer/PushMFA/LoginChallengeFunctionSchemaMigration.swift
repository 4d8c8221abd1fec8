/// Migration 7 (PostgreSQL only): login-challenge creation as one function call instead of a transaction of four
/// round trips (BEGIN, lock + delete the session's challenge, count + insert, COMMIT). A VOLATILE PL/pgSQL function
/// takes a fresh snapshot per statement, so its count runs after the per-user lock is held and sees every creation
/// committed before it — what a single INSERT … SELECT under READ COMMITTED cannot do (its snapshot predates the lock).
/// The lock is held until the calling statement's transaction commits, after the insert.
enum LoginChallengeFunctionSchemaMigration {
    static let piece = SchemaMigration.Piece(version: 7, name: "login challenge creation function") { engine in
        guard engine == .postgres else { return [] }
        return [
            """
            CREATE OR REPLACE FUNCTION keyward_create_login_challenge(
                new_id TEXT, new_realm TEXT, new_user_id TEXT, new_kind TEXT, new_status TEXT, new_nonce TEXT,
                new_credential_id TEXT, new_client_id TEXT, new_session_id TEXT, new_watch_secret_hash TEXT,
                new_uv_mode TEXT, new_uv_value TEXT, new_uv_options TEXT, new_uv_failures BIGINT,
                new_created_at BIGINT, new_expires_at BIGINT, new_resolved_at BIGINT,
                max_pending BIGINT, now_millis BIGINT
            ) RETURNS TABLE (replaced_ids TEXT[], inserted BOOLEAN) LANGUAGE plpgsql VOLATILE AS $$
            DECLARE
                replaced TEXT[];
                pending BIGINT;
            BEGIN
                PERFORM pg_advisory_xact_lock(hashtext(new_realm || ':' || new_user_id));
                WITH deleted AS (
                    DELETE FROM push_challenges
                    WHERE realm = new_realm AND user_id = new_user_id AND kind = 'AUTHENTICATION'
                      AND status = 'PENDING' AND session_id = new_session_id
                    RETURNING id
                )
                SELECT COALESCE(array_agg(id), '{}') INTO replaced FROM deleted;
                SELECT COUNT(*) INTO pending FROM push_challenges
                WHERE realm = new_realm AND user_id = new_user_id AND kind = 'AUTHENTICATION'
                  AND status = 'PENDING' AND expires_at > now_millis;
                IF pending >= max_pending THEN
                    RETURN QUERY SELECT replaced, false;
                    RETURN;
                END IF;
                INSERT INTO push_challenges (
                    id, realm, user_id, kind, status, nonce, credential_id, client_id, session_id, watch_secret_hash,
                    uv_mode, uv_value, uv_options, uv_failures, created_at, expires_at, resolved_at
                ) VALUES (
                    new_id, new_realm, new_user_id, new_kind, new_status, new_nonce, new_credential_id, new_client_id,
                    new_session_id, new_watch_secret_hash, new_uv_mode, new_uv_value, new_uv_options, new_uv_failures,
                    new_created_at, new_expires_at, new_resolved_at
                );
                RETURN QUERY SELECT replaced, true;
            END
            $$
            """
        ]
    }
}
