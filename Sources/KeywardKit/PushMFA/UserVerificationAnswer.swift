// Checks a number-match or PIN answer on the device before it is sent.
import KeywardWire

extension UserVerificationPrompt {
    /// Checks an answer on the device before it is sent: Keyward counts wrong answers per challenge, so a typo
    /// caught here does not use up an attempt. Compared as the server does, after trimming. Unknown prompt
    /// types are left to the server.
    public func check(answer: String) throws {
        let answer = answer.trimmingCharacters(in: .whitespaces)
        switch type {
        case "number-match":
            guard let numbers, !numbers.isEmpty else { return }
            guard numbers.contains(answer) else {
                throw KeywardKitError.invalidAnswer("'\(answer)' is not one of the numbers offered (\(numbers.joined(separator: ", ")))")
            }
        case "pin":
            guard !answer.isEmpty, answer.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw KeywardKitError.invalidAnswer("a PIN is digits only")
            }
            if let pinLength, answer.count != pinLength {
                throw KeywardKitError.invalidAnswer("the PIN has \(pinLength) digits, '\(answer)' has \(answer.count)")
            }
        default:
            return
        }
    }

    /// What the user must do, for prompts: "the number shown in the browser (one of 5, 34, 56)".
    public var instruction: String {
        switch type {
        case "number-match": "the number shown in the browser" + (numbers.map { " (one of \($0.joined(separator: ", ")))" } ?? "")
        case "pin": "the \(pinLength.map { "\($0)-digit " } ?? "")PIN shown in the browser"
        default: "a '\(type)' answer"
        }
    }
}
