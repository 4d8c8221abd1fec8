// The number match or PIN a user confirms on the phone before an approval counts.
import Foundation
import KeywardJOSE

/// What the browser shows and the phone must send back before an approval counts (MFA-fatigue defence).
public enum UserVerification: Sendable, Equatable {
    case none
    /// Three distinct numbers "0"–"99"; the browser shows `expected`, the phone offers all three.
    case numberMatch(expected: String, options: [String])
    /// A random PIN of 1–12 digits (leading zeros possible) the user types on the phone.
    case pin(String)

    public enum Mode: String, Sendable, CaseIterable {
        case none
        case numberMatch = "number-match"
        case pin

        /// Accepts the spellings the original accepts (`number-match`, `number_match`, `numbermatch`).
        public init?(configured value: String) {
            switch value.trimmingCharacters(in: .whitespaces).lowercased() {
            case "none", "": self = .none
            case "number-match", "number_match", "numbermatch": self = .numberMatch
            case "pin": self = .pin
            default: return nil
            }
        }
    }

    public static let maximumPinLength = 12

    /// Keyward's addition: after this many wrong answers the challenge is resolved DENIED. A number match
    /// shows three numbers, so allowing three tries would let a phished user tap each in turn until one
    /// approves: its first wrong answer denies, as Okta Verify and Duo do. A PIN cannot be found by tapping
    /// and keeps three tries for typos.
    public var allowedWrongAnswers: Int {
        switch self {
        case .none, .numberMatch: 1
        case .pin: 3
        }
    }

    /// Fresh values from the system CSPRNG.
    public static func generate(mode: Mode, pinLength: Int) -> UserVerification {
        var generator = SecureRandom.Generator()
        switch mode {
        case .none:
            return .none
        case .numberMatch:
            // Three distinct numbers, each uniform over what is left: drawing again on a repeat is unbiased.
            var options: [String] = []
            while options.count < 3 {
                let number = String(Int.random(in: 0...99, using: &generator))
                if !options.contains(number) { options.append(number) }
            }
            return .numberMatch(expected: options.randomElement(using: &generator)!, options: options)
        case .pin:
            let length = min(max(pinLength, 1), maximumPinLength)
            return .pin(String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) }))
        }
    }

    public var mode: Mode {
        switch self {
        case .none: .none
        case .numberMatch: .numberMatch
        case .pin: .pin
        }
    }

    /// The value the browser displays and the phone must return; nil for `none`.
    public var expectedValue: String? {
        switch self {
        case .none: nil
        case .numberMatch(let expected, _): expected
        case .pin(let pin): pin
        }
    }

    /// Constant-time comparison of a trimmed answer with the expected value.
    public func accepts(_ answer: String) -> Bool {
        guard let expected = expectedValue else { return true }
        return ConstantTime.equal(answer.trimmingCharacters(in: .whitespacesAndNewlines), expected)
    }

    // Storage form: mode, value, comma-joined options (the original stores options the same way).
    var storedValue: String? { expectedValue }
    var storedOptions: String? {
        if case .numberMatch(_, let options) = self { return options.joined(separator: ",") }
        return nil
    }

    init(storedMode: String, value: String?, options: String?) {
        switch (Mode(rawValue: storedMode), value) {
        case (.numberMatch?, let expected?):
            self = .numberMatch(expected: expected, options: options?.split(separator: ",").map(String.init) ?? [expected])
        case (.pin?, let pin?):
            self = .pin(pin)
        default:
            self = .none
        }
    }
}
