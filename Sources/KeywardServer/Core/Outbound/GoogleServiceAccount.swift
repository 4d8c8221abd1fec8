// Reading the Google service-account file a server mints Google API access tokens with.
import Foundation
import KeywardJOSE

/// The parts of a Google service-account JSON file that minting an access token needs.
struct GoogleServiceAccount: Sendable {
    static let setting = "push.fcm.serviceAccountFile"

    let clientEmail: String
    let privateKeyId: String?
    let tokenURI: String
    let signingKey: SigningKey

    /// `setting` names the setting the file came from in every error.
    static func load(path: String, setting: String = Self.setting) throws(SettingError) -> GoogleServiceAccount {
        let data = try SettingFile.contents(setting: setting, path: path)
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(Array(data))
        } catch {
            throw SettingError(setting: setting, file: path, problem: "not a JSON object (\(error.message))")
        }
        func requiredString(_ member: String) throws(SettingError) -> String {
            guard let value = object.string(member), !value.isEmpty else {
                throw SettingError(setting: setting, file: path, problem: "no \(member)")
            }
            return value
        }
        if let type = object.string("type"), type != "service_account" {
            throw SettingError(setting: setting, file: path, problem: "type is \"\(type)\", not \"service_account\"")
        }
        let clientEmail = try requiredString("client_email")
        let tokenURI = try requiredString("token_uri")
        let privateKey = try requiredString("private_key")
        guard let url = URL(string: tokenURI), ["https", "http"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw SettingError(setting: setting, file: path, problem: "token_uri \"\(tokenURI)\" is not an http(s) URL")
        }
        let key = try SettingFile.signingKey(setting: setting, path: path, pem: privateKey, expected: .rsa)
        let privateKeyId = object.string("private_key_id").flatMap { $0.isEmpty ? nil : $0 }
        return GoogleServiceAccount(clientEmail: clientEmail, privateKeyId: privateKeyId, tokenURI: tokenURI, signingKey: key)
    }
}
