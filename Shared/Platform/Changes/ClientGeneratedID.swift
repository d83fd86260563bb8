/// Ids that an offline app makes for the rows it creates, so a create sent again after a
/// lost reply (or from the queue of a device that was offline) names the same row.
///
/// The rule for a service that takes them on a create: the same id from the same owner
/// with the same content is the row already made (answered as the first time); the same
/// id with other content, or another owner's id, is `conflict` with reason `id_taken`,
/// never a second row and never a sign of whose the id is. `idem` gives the same safety
/// for one request; a client id also holds across different requests that refer to the
/// row before the server has answered (an offline edit of an offline create).
public enum ClientGeneratedID {
    /// 8 to 64 characters of `A-Z a-z 0-9 _ -`: a UUID in either spelling fits, and
    /// nothing that needs escaping in a log line or a URL.
    public static let schema = JSONSchema.string(minLength: 8, maxLength: 64).described("a client-generated id: 8-64 of A-Z a-z 0-9 _ - (a UUID fits)")

    /// Whether `id` is such an id.
    public static func isValid(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (8...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 45 || byte == 95
        }
    }

    /// `id`, or `validation_failed` on `field`.
    public static func check(_ id: String, field: String = "id") throws -> String {
        guard isValid(id) else { throw ServiceError.invalid(field, "not a client id: 8-64 of A-Z a-z 0-9 _ -") }
        return id
    }
}
