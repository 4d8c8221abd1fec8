// Tests: released schema migrations still run exactly their original statements, pinned by SHA-256 per engine.
import Crypto
@testable import KeywardServer
import XCTest

/// A released migration never changes: the statements each version runs, on each engine, are pinned here by their
/// SHA-256 (statements joined by "\n;\n"). Parts declare the pieces of the migrations that created their tables
/// (`KeywardPart.migrations`); however they are split and wherever they live, the assembled migrations must run
/// exactly these statements, under the same names, in the same order.
final class MigrationHistoryTests: XCTestCase {
    static let released: [Int: (name: String, sqlite: String, postgres: String)] = [
        1: ("initial schema", "67ce47502463dcd810dcddaff9cb01e55c01285b0f9916bbfe346fe3f01de371", "bc2c17961c8c0f81a30fd1432dc168b615629caa168fa347dbd93ea1c5433d41"),
        2: ("push MFA and audit events", "6a1220bda03a25eddd63e16177520d87d1b3996c94ee4f95fb517c85175a7e35", "6a1220bda03a25eddd63e16177520d87d1b3996c94ee4f95fb517c85175a7e35"),
        3: ("browser sessions", "99fce7f12a5767a7264273c24564bc9c593674bbe79c32fc003f9e1e4046e7ce", "99fce7f12a5767a7264273c24564bc9c593674bbe79c32fc003f9e1e4046e7ce"),
        4: ("login attempts", "2f86605786498f5e3b27bf074e56073302bcf43c9062ee8a5bc4b1dde9977e70", "2f86605786498f5e3b27bf074e56073302bcf43c9062ee8a5bc4b1dde9977e70"),
        5: ("challenge change notifications", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "50d62cd801ea2b0c43d76588d99ab682ceb01db1b54457a71254021927200a14"),
        6: ("challenge notifications carry the status", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "52e578f07f5a4bea9a55c176aa057e8d73783ca5a2f791fdd4213d52b927c29a"),
        7: ("login challenge creation function", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "0fbf6373475ef49a44b27c08b0547f6de1bc82a7b3b4b19b0f5cb56f0fd63d23"),
        8: ("host-token issuers, external identities, public clients", "dd418915a03c29bcb51dd4f817d01b4547aa955757484b320fabcfa0bf1cbc87", "dd418915a03c29bcb51dd4f817d01b4547aa955757484b320fabcfa0bf1cbc87"),
        9: ("device apps and registered devices", "59958f5732d7b16e9c33e9ac2c470d52cd53daecc57daa501e34eb19040ee795", "59958f5732d7b16e9c33e9ac2c470d52cd53daecc57daa501e34eb19040ee795"),
        10: ("devices: attested flag, pending and unattested indexes", "c3d2930452222e547bbab604eed44479c2d3e22920d244982af97315f0b50a8e", "c3d2930452222e547bbab604eed44479c2d3e22920d244982af97315f0b50a8e"),
        11: ("identity providers, provider identities, session sign-in details", "33279d03baf35677acc7132928af97c33ac74e19dd988ded486f5bd4afc85254", "33279d03baf35677acc7132928af97c33ac74e19dd988ded486f5bd4afc85254"),
        12: ("apple refresh tokens for revocation, username claims", "7b6644be5a4db047475fc0cb47cfd9dd284b5b03b71fc592dba86619a40a0fec", "7b6644be5a4db047475fc0cb47cfd9dd284b5b03b71fc592dba86619a40a0fec"),
        13: ("a user and their first identity in one insert", "4bdcf5ef8db73671b5d9cf0cc2887cdc616bb19a19fb95698fdda3d349c1f257", "5c638a61fe0a454339216ec85b9f25914b15a25687fea106a5564a83648a70ec"),
        14: ("replay entries: no expiry index, swept in key order", "56c06568acd6cb78164649dca75d6befe22f5deaad0ba1abc48f7148f415de3e", "56c06568acd6cb78164649dca75d6befe22f5deaad0ba1abc48f7148f415de3e"),
        15: ("client redirect URIs, first-party and PAR settings", "b9157c9d2bc4112e3e6f5ecebf3de9ad7f27c6281f8d02026db80ac8aa7f5c3c", "b9157c9d2bc4112e3e6f5ecebf3de9ad7f27c6281f8d02026db80ac8aa7f5c3c"),
        16: ("OpenID Connect sign-in: sign-in times and refresh-token families", "17e82c5c16d0792827c2df0a1c50c8ff1687f196c25ff2680e31aaf261beb9c5", "17e82c5c16d0792827c2df0a1c50c8ff1687f196c25ff2680e31aaf261beb9c5"),
        17: ("broker: broker clients and hand-offs", "880d06dba9a9a985d71009b27d3725ad97140df2c2579202390b7d2971c41faa", "880d06dba9a9a985d71009b27d3725ad97140df2c2579202390b7d2971c41faa"),
        18: ("broker: realm settings", "9d07ab21c9879633725a113515b35fe72e692236934423f82701d1ae14dd586f", "9d07ab21c9879633725a113515b35fe72e692236934423f82701d1ae14dd586f"),
        19: ("passkeys: settings and credentials", "9331d36ef09ecf477b542b73d729d8f86d6774837516ad5dc2e6859af11e5250", "9331d36ef09ecf477b542b73d729d8f86d6774837516ad5dc2e6859af11e5250"),
        20: ("one device, one key: devices' people, removal, push on a registered device", "f806979d101d6d726741b99b2580c97612ebf6297a4c77058cabf709ae1d5c75", "f806979d101d6d726741b99b2580c97612ebf6297a4c77058cabf709ae1d5c75"),
        21: ("administration over HTTP: admin scopes, user revisions", "f59423b456af7c6a0f50810a988832d7d1a099883b2e0940ba20c23f9e11f846", "f59423b456af7c6a0f50810a988832d7d1a099883b2e0940ba20c23f9e11f846"),
        22: ("SCIM directory tokens", "976193d6a6b71494d1f57eaed6ca0287b0cd4a5ce55798b7521c714226fbd5de", "976193d6a6b71494d1f57eaed6ca0287b0cd4a5ce55798b7521c714226fbd5de"),
        23: ("user profiles and e-mail addresses", "68d6dc5592028f76b6af279f06f55eab8999e6e72c0365d563f9d403d981effe", "5194d39cbb5e06ca1b78a4c9024f08de956a702967277411fd6d30e868bd573a"),
        24: ("SCIM groups", "a60df4a29baf48d047c01b28170114be9a33416aef309da48747abcaff200df8", "a60df4a29baf48d047c01b28170114be9a33416aef309da48747abcaff200df8"),
    ]

    static func digest(_ migration: SchemaMigration, _ engine: DatabaseEngine) -> String {
        SHA256.hash(data: Array(migration.statements(engine).joined(separator: "\n;\n").utf8)).map { String(format: "%02x", $0) }.joined()
    }

    func testReleasedMigrationsRunTheirOriginalStatements() {
        let migrations = SchemaMigration.all
        XCTAssertEqual(migrations.map(\.version), Array(1...migrations.count), "versions run 1, 2, 3, … with none missing")
        for migration in migrations {
            let line = "\(migration.version): (\"\(migration.name)\", \"\(Self.digest(migration, .sqlite))\", \"\(Self.digest(migration, .postgres))\"),"
            guard let released = Self.released[migration.version] else {
                XCTFail("migration \(migration.version) is not pinned; add: \(line)")
                continue
            }
            XCTAssertEqual(migration.name, released.name, "migration \(migration.version)'s name")
            XCTAssertEqual(Self.digest(migration, .sqlite), released.sqlite, "migration \(migration.version) on SQLite changed")
            XCTAssertEqual(Self.digest(migration, .postgres), released.postgres, "migration \(migration.version) on PostgreSQL changed")
        }
    }
}
