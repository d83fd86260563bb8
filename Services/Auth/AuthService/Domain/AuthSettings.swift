import Foundation
import Platform

/// Auth's own settings, from `BACKEND_AUTH_*` environment variables (README, "Auth").
public struct AuthSettings: Sendable, Equatable {
    /// log2 of scrypt's N (`BACKEND_AUTH_SCRYPT_LOG_N`, default 17, the production minimum;
    /// tests lower it to keep the suite fast).
    public var scryptLogN = 17
    /// Leading zero bits the proof of work needs (`BACKEND_AUTH_POW_DIFFICULTY`, default 18).
    public var proofOfWorkDifficulty = 18
    /// Session lifetimes (`BACKEND_AUTH_IDLE_TIMEOUT_S`, default 900).
    public var sessions = SessionPolicy()
    /// The version of the terms people accept now (`BACKEND_AUTH_TERMS_VERSION`).
    public var termsVersion = "2026-11"
    /// How long an SMS sign-in code is valid (`BACKEND_AUTH_SMS_CODE_TTL_S`, default 300).
    public var smsCodeLifetime: TimeInterval = 300
    /// The earliest resend of a code (`BACKEND_AUTH_CODE_RESEND_S`, default 60).
    public var codeResendInterval: TimeInterval = 60
    /// Wrong passwords allowed per account and client, per account, per client
    /// (`BACKEND_AUTH_PASSWORD_LIMITS`: `5/50/20`, in 15 minutes).
    public var passwordLimits = PasswordLimits()
    /// The key that seals the signing keys at rest (`BACKEND_AUTH_KEY_ENCRYPTION_KEY`: 32
    /// random bytes in base64, `openssl rand -base64 32`); unset stores them in the clear
    /// and warns at start-up.
    public var keyEncryptionKey: String?
    /// Anonymous device accounts unused this long are deleted
    /// (`BACKEND_AUTH_DEVICE_ACCOUNT_IDLE_DAYS`, default 180).
    public var deviceAccountMaxIdle: TimeInterval = 180 * 86_400
    /// SMS caps per number, account and client (`BACKEND_AUTH_SMS_CAPS`, see ``SMSCaps``).
    public var smsCaps = SMSCaps()
    /// Password hashes allowed to wait for a hashing thread (`BACKEND_AUTH_HASH_QUEUE`,
    /// default 16); beyond, `rate_limited` at once.
    public var hashQueue = 16
    /// How emails and SMS leave (`BACKEND_AUTH_EMAIL_TRANSPORT` `file` or `smtp`,
    /// `BACKEND_AUTH_SMTP_URL`, `_SMTP_FROM`, `_SMTP_USER`, `_SMTP_PASSWORD`,
    /// `BACKEND_AUTH_SMS_TRANSPORT` `file` or `http`, `_SMS_URL`, `_SMS_TOKEN`,
    /// `BACKEND_AUTH_OUTBOX_DIR`; the platform's ``MessageTransportSettings``).
    public var messages = MessageTransportSettings()
    /// The Graph API base (`BACKEND_AUTH_FACEBOOK_GRAPH_URL`, default `https://graph.facebook.com/v19.0`).
    public var facebookGraphURL = "https://graph.facebook.com/v19.0"
    /// The Facebook app (`BACKEND_AUTH_FACEBOOK_APP_ID`, `BACKEND_AUTH_FACEBOOK_APP_SECRET`); unset turns Facebook sign-in off.
    public var facebookAppID: String?
    public var facebookAppSecret: String?
    /// Retries, dead letters and rate limits of emails and SMS (`BACKEND_AUTH_DELIVERY_*`,
    /// see ``DeliverySettings/fromEnvironment(_:prefix:)``).
    public var delivery = DeliverySettings()

    /// The defaults.
    public init() {}

    /// Reads the environment on top of the defaults.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AuthSettings {
        var settings = AuthSettings()
        if let value = environment["BACKEND_AUTH_SCRYPT_LOG_N"] {
            guard let logN = Int(value), (10...22).contains(logN) else {
                throw ConfigurationError("BACKEND_AUTH_SCRYPT_LOG_N must be 10 to 22")
            }
            settings.scryptLogN = logN
        }
        if let value = environment["BACKEND_AUTH_POW_DIFFICULTY"] {
            guard let bits = Int(value), (0...32).contains(bits) else {
                throw ConfigurationError("BACKEND_AUTH_POW_DIFFICULTY must be 0 to 32")
            }
            settings.proofOfWorkDifficulty = bits
        }
        if let value = environment["BACKEND_AUTH_IDLE_TIMEOUT_S"] {
            guard let seconds = TimeInterval(value), seconds >= 60 else {
                throw ConfigurationError("BACKEND_AUTH_IDLE_TIMEOUT_S must be at least 60")
            }
            settings.sessions.idleTimeout = seconds
        }
        if let value = environment["BACKEND_AUTH_PASSWORD_LIMITS"] {
            let numbers = value.split(separator: "/").compactMap { Int($0) }
            guard numbers.count == 3, numbers.allSatisfy({ $0 >= 1 }) else {
                throw ConfigurationError("BACKEND_AUTH_PASSWORD_LIMITS must be <per account and client>/<per account>/<per client>, e.g. 5/50/20")
            }
            (settings.passwordLimits.perAccountAndClient, settings.passwordLimits.perAccount, settings.passwordLimits.perClient) =
                (numbers[0], numbers[1], numbers[2])
        }
        if let value = environment["BACKEND_AUTH_SMS_CAPS"] {
            guard let caps = SMSCaps.parse(value) else {
                throw ConfigurationError("BACKEND_AUTH_SMS_CAPS must be like number=5/10,account=5/10,client=10/30 (per hour/per day)")
            }
            settings.smsCaps = caps
        }
        if let value = environment["BACKEND_AUTH_KEY_ENCRYPTION_KEY"], !value.isEmpty {
            guard (try? SecretBox(base64: value)) != nil else {
                throw ConfigurationError("BACKEND_AUTH_KEY_ENCRYPTION_KEY must be 32 random bytes in base64 (openssl rand -base64 32)")
            }
            settings.keyEncryptionKey = value
        }
        if let value = environment["BACKEND_AUTH_DEVICE_ACCOUNT_IDLE_DAYS"] {
            guard let days = Double(value), days > 0, days <= 3_650 else {
                throw ConfigurationError("BACKEND_AUTH_DEVICE_ACCOUNT_IDLE_DAYS must be a number of days, more than 0")
            }
            settings.deviceAccountMaxIdle = days * 86_400
        }
        if let value = environment["BACKEND_AUTH_MAX_SESSIONS"] {
            guard let count = Int(value), (1...1_000).contains(count) else { throw ConfigurationError("BACKEND_AUTH_MAX_SESSIONS must be 1 to 1000") }
            settings.sessions.maxSessions = count
        }
        if let value = environment["BACKEND_AUTH_HASH_QUEUE"] {
            guard let count = Int(value), (1...1_000).contains(count) else { throw ConfigurationError("BACKEND_AUTH_HASH_QUEUE must be 1 to 1000") }
            settings.hashQueue = count
        }
        if let value = environment["BACKEND_AUTH_TERMS_VERSION"], !value.isEmpty { settings.termsVersion = value }
        if let value = environment["BACKEND_AUTH_SMS_CODE_TTL_S"] {
            guard let seconds = TimeInterval(value), seconds >= 1 else { throw ConfigurationError("BACKEND_AUTH_SMS_CODE_TTL_S must be at least 1") }
            settings.smsCodeLifetime = seconds
        }
        if let value = environment["BACKEND_AUTH_CODE_RESEND_S"] {
            guard let seconds = TimeInterval(value), seconds >= 0 else { throw ConfigurationError("BACKEND_AUTH_CODE_RESEND_S must be 0 or more") }
            settings.codeResendInterval = seconds
        }
        settings.messages = try MessageTransportSettings.fromEnvironment(environment, prefix: "BACKEND_AUTH")
        if let value = environment["BACKEND_AUTH_FACEBOOK_GRAPH_URL"], !value.isEmpty { settings.facebookGraphURL = value }
        settings.facebookAppID = environment["BACKEND_AUTH_FACEBOOK_APP_ID"].flatMap { $0.isEmpty ? nil : $0 }
        settings.facebookAppSecret = environment["BACKEND_AUTH_FACEBOOK_APP_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        settings.delivery = try DeliverySettings.fromEnvironment(environment, prefix: "BACKEND_AUTH_DELIVERY")
        return settings
    }
}
