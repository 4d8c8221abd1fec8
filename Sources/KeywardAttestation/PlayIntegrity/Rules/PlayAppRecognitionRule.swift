// The Play Integrity check that Play recognizes the app binary as the one uploaded to Play.
import Foundation

/// Play knows this binary (`APP_NOT_RECOGNIZED`): PLAY_RECOGNIZED, the app as uploaded to Play. UNRECOGNIZED_VERSION
/// (a modified or sideloaded build) and UNEVALUATED (nothing was judged) are refused.
struct PlayAppRecognitionRule: PlayIntegrityRule {
    func check(_ verdict: PlayIntegrityVerdict, at time: Date) throws(AttestationFailure) -> AttestationCheck {
        guard verdict.appRecognitionVerdict == "PLAY_RECOGNIZED" else {
            throw AttestationFailure(.appNotRecognized, "the app recognition verdict is \(verdict.appRecognitionVerdict.prefix(64)), not PLAY_RECOGNIZED")
        }
        return AttestationCheck("appRecognition", .passed, "PLAY_RECOGNIZED")
    }
}
