import GRDB

// Statuses and payment methods are stored as their raw values.
extension BookingStatus: DatabaseValueConvertible {}
extension PaymentMethod: DatabaseValueConvertible {}
