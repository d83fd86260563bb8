import COpenSSL
import Foundation

/// Authenticated encryption of small secrets at rest (AES-256-GCM, OpenSSL): a sealed
/// value is `"sb1" ‖ 12-byte random nonce ‖ ciphertext ‖ 16-byte tag`, and `context`
/// (e.g. a key id) is bound to it as associated data, so a sealed value cannot be moved
/// to another row.
public struct SecretBox: Sendable {
    private let key: [UInt8]
    private static let magic: [UInt8] = Array("sb1".utf8)

    /// A box with a 32-byte key.
    public init(key: [UInt8]) throws {
        guard key.count == 32 else { throw CryptoError("a SecretBox key has 32 bytes") }
        self.key = key
    }

    /// A box from a base64 text of 32 random bytes (`openssl rand -base64 32`).
    public init(base64 text: String) throws {
        guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else {
            throw CryptoError("the key must be 32 random bytes in base64 (openssl rand -base64 32)")
        }
        try self.init(key: Array(data))
    }

    /// Whether `value` is in the sealed form.
    public static func isSealed(_ value: [UInt8]) -> Bool {
        value.count >= magic.count + 12 + 16 && Array(value.prefix(magic.count)) == magic
    }

    /// Encrypts `plaintext` bound to `context`.
    public func seal(_ plaintext: [UInt8], context: [UInt8]) throws -> [UInt8] {
        let nonce = Digest.randomBytes(12)
        let (ciphertext, tag) = try crypt(encrypt: true, plaintext, nonce: nonce, context: context, tag: nil)
        return Self.magic + nonce + ciphertext + tag
    }

    /// Decrypts a sealed value; throws when it was changed, sealed for another context or
    /// with another key.
    public func open(_ sealed: [UInt8], context: [UInt8]) throws -> [UInt8] {
        guard Self.isSealed(sealed) else { throw CryptoError("not a sealed value") }
        let body = Array(sealed.dropFirst(Self.magic.count))
        let nonce = Array(body.prefix(12)), tag = Array(body.suffix(16))
        let ciphertext = Array(body.dropFirst(12).dropLast(16))
        return try crypt(encrypt: false, ciphertext, nonce: nonce, context: context, tag: tag).output
    }

    private func crypt(encrypt: Bool, _ input: [UInt8], nonce: [UInt8], context: [UInt8], tag: [UInt8]?) throws -> (output: [UInt8], tag: [UInt8]) {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError("no cipher context") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let initialize = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
        guard initialize(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1,
            initialize(ctx, nil, nil, key, nonce) == 1
        else { throw CryptoError("cannot start AES-256-GCM") }
        var length: Int32 = 0
        let update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate
        if !context.isEmpty {
            guard update(ctx, nil, &length, context, Int32(context.count)) == 1 else { throw CryptoError("AES-GCM associated data") }
        }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        guard update(ctx, &output, &length, input, Int32(input.count)) == 1 else { throw CryptoError("AES-GCM update") }
        var total = Int(length)
        if encrypt {
            var finalLength: Int32 = 0
            let finished = output.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(ctx, $0.baseAddress! + total, &finalLength) }
            guard finished == 1 else { throw CryptoError("AES-GCM final") }
            total += Int(finalLength)
            var tag = [UInt8](repeating: 0, count: 16)
            guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1 else { throw CryptoError("AES-GCM tag") }
            return (Array(output.prefix(total)), tag)
        }
        var expected = tag ?? []
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, &expected) == 1 else { throw CryptoError("AES-GCM tag") }
        var finalLength: Int32 = 0
        let verified = output.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(ctx, $0.baseAddress! + total, &finalLength) }
        guard verified == 1 else { throw CryptoError("the sealed value does not open with this key") }
        total += Int(finalLength)
        return (Array(output.prefix(total)), [])
    }
}
