// Running every step of a list even when one fails: what removing or disabling something asks of each part.

/// Runs `body` for each of `items` in order, all of them even when some fail; throws the first failure once all ran
/// (each step is idempotent, so the caller may run them all again).
func runEach<Item>(_ items: [Item], _ body: (Item) async throws -> Void) async throws {
    var failure: (any Error)?
    for item in items {
        do {
            try await body(item)
        } catch {
            failure = failure ?? error
        }
    }
    if let failure { throw failure }
}
