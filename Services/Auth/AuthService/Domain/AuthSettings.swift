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
    /// Failed sign-ins per account allowed in 15 minutes before `rate_limited`.
    public var failedSignInLimit = 5

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
        if let value = environment["BACKEND_AUTH_TERMS_VERSION"], !value.isEmpty { settings.termsVersion = value }
        return settings
    }
}
