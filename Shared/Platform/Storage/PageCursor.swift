/// Keyset cursors for the contract's paged lists (`{"limit", "cursor"}` in, `{"items",
/// "next"}` out): the sort key and the id of the last item, opaque to clients.
public enum PageCursor {
    /// The cursor after the item with sort key `key` and id `id`.
    public static func encode(_ key: String, _ id: String) -> String { Base64URL.encode(Array("\(key)|\(id)".utf8)) }

    /// The key and id a cursor names; anything else is `validation_failed` on `cursor`.
    public static func decode(_ cursor: String) throws -> (key: String, id: String) {
        guard let bytes = Base64URL.decode(cursor), let text = String(bytes: bytes, encoding: .utf8),
            let bar = text.firstIndex(of: "|")
        else { throw ServiceError.invalid("cursor", "not a cursor from this list") }
        return (String(text[..<bar]), String(text[text.index(after: bar)...]))
    }
}
