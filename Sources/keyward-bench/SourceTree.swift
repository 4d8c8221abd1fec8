// Where the bench finds the repository it was built from, for its test vectors and Python doubles.
import Foundation

/// The repository this binary was built from (Sources/keyward-bench/ → the root): where the bench finds the test
/// vectors and the Python doubles it uses.
enum SourceTree {
    static var root: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }
}
