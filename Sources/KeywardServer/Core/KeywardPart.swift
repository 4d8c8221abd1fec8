// What a part of Keyward contributes: migrations, sweeps, routes, background services, shutdown.
import Hummingbird
import ServiceLifecycle

/// A part of Keyward (OAuth, Accounts, push MFA, ...): what it adds to the schema, to the sweep, to the router and to
/// the running server. `KeywardRuntime` builds the parts in dependency order and loops over them, so adding a part
/// adds its line to `KeywardRuntime.partTypes` and its construction, and touches no other central list (docs/
/// ARCHITECTURE.md §5).
protocol KeywardPart: Sendable {
    /// Its shares of the numbered migrations: the statements that created or changed its own tables.
    static var migrations: [SchemaMigration.Piece] { get }
    /// The rows it expires, run by the sweeper every `sweep.interval`.
    var sweeps: [ExpiredRowSweep] { get }
    /// Registers its JSON API on `router` and its pages on `web.pages`. Called once every part is assembled, so what
    /// other parts plugged into it (token grants, a second factor) is there.
    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface)
    /// Work it runs beside the HTTP server while the server runs.
    var backgroundServices: [any Service] { get }
    /// Releases what it holds (HTTP clients, thread pools) when the server stops.
    func shutdown() async
}

extension KeywardPart {
    func registerRoutes(on router: Router<KeywardRequestContext>, web: PageSurface) {}
    var sweeps: [ExpiredRowSweep] { [] }
    var backgroundServices: [any Service] { [] }
    func shutdown() async {}
}
