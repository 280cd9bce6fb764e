// The Encoder and containers behind SummaryJSONEncoder. Every container funnels into two
// calls: `put(PendingJSON)` for a leaf, `put(value)` for anything with an `encode(to:)`.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something a leaf or a value can be put into.
protocol JSONPlace {
    func put(_ leaf: PendingJSON) throws
    func put<T: Encodable>(_ value: T) throws
}

extension PendingJSON {
    static func double(_ x: Double) throws -> PendingJSON {
        guard x.isFinite else {
            throw EncodingError.invalidValue(x, .init(codingPath: [], debugDescription: "Unable to encode Double.\(x) directly in JSON."))
        }
        return .number(JSONOutput.trimmed(x.description))
    }

    static func float(_ x: Float) throws -> PendingJSON {
        guard x.isFinite else {
            throw EncodingError.invalidValue(x, .init(codingPath: [], debugDescription: "Unable to encode Float.\(x) directly in JSON."))
        }
        return .number(JSONOutput.trimmed(x.description))
    }
}

/// The encoder of one `encode(to:)` call whose value is written now, at `level`: an array's
/// elements go straight to the output, an object's members are collected until the call
/// returns (`finish`), a single value is written at once.
final class ValueEncoder: Encoder, SingleValueEncodingContainer, JSONPlace {
    enum Shape { case nothing, single, object, array }
    unowned let output: JSONOutput
    // Not checked for overlapping access, as JSONOutput's state.
    @exclusivity(unchecked) private(set) var level = 0
    @exclusivity(unchecked) private var shape = Shape.nothing
    private let members = JSONObjectNode()
    @exclusivity(unchecked) private var elementCount = 0
    /// An element built through a nested container or a super-encoder: complete only when
    /// the next element comes or the array ends.
    @exclusivity(unchecked) private var openElement: PendingJSON?

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(output: JSONOutput) { self.output = output }

    func reset(level: Int) {
        self.level = level
        shape = .nothing
        members.members.removeAll(keepingCapacity: true)
        elementCount = 0
        openElement = nil
    }

    func finish() throws {
        switch shape {
        case .nothing: output.emptyObject(level: level)
        case .single: break
        case .object: try output.object(members, level: level)
        case .array:
            try writeOpenElement()
            output.closeArray(level: level)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        precondition(shape == .nothing || shape == .object, "a keyed container after another kind of value")
        shape = .object
        return KeyedEncodingContainer(ObjectMembers<Key>(node: members))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        precondition(shape == .nothing || shape == .array, "an unkeyed container after another kind of value")
        if shape == .nothing {
            shape = .array
            output.openArray()
        }
        return ArrayElements(place: self, count: { [unowned self] in self.elementCount })
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: The array's elements, or the single value

    func put(_ leaf: PendingJSON) throws {
        if shape == .array {
            try nextElement()
            try output.pending(leaf, level: level + 1)
        } else {
            shape = .single
            try output.pending(leaf, level: level)
        }
    }

    func put<T: Encodable>(_ value: T) throws {
        if shape == .array {
            try nextElement()
            try output.value(value, level: level + 1)
        } else {
            shape = .single
            try output.value(value, level: level)
        }
    }

    /// An element through a nested container: written when complete.
    func putOpen(_ element: PendingJSON) throws {
        try nextElement()
        openElement = element
    }

    private func nextElement() throws {
        try writeOpenElement()
        output.arraySeparator(first: elementCount == 0, level: level + 1)
        elementCount += 1
    }

    private func writeOpenElement() throws {
        guard let element = openElement else { return }
        openElement = nil
        try output.pending(element, level: level + 1)
    }

    // MARK: SingleValueEncodingContainer

    func encodeNil() throws { try put(.null) }
    func encode(_ value: Bool) throws { try put(.bool(value)) }
    func encode(_ value: String) throws { try put(.string(value)) }
    func encode(_ value: Double) throws { try put(.double(value)) }
    func encode(_ value: Float) throws { try put(.float(value)) }
    func encode(_ value: Int) throws { try put(.signed(Int64(value))) }
    func encode(_ value: Int8) throws { try put(.signed(Int64(value))) }
    func encode(_ value: Int16) throws { try put(.signed(Int64(value))) }
    func encode(_ value: Int32) throws { try put(.signed(Int64(value))) }
    func encode(_ value: Int64) throws { try put(.signed(value)) }
    func encode(_ value: UInt) throws { try put(.unsigned(UInt64(value))) }
    func encode(_ value: UInt8) throws { try put(.unsigned(UInt64(value))) }
    func encode(_ value: UInt16) throws { try put(.unsigned(UInt64(value))) }
    func encode(_ value: UInt32) throws { try put(.unsigned(UInt64(value))) }
    func encode(_ value: UInt64) throws { try put(.unsigned(value)) }
    func encode<T: Encodable>(_ value: T) throws { try put(value) }
}

/// An object's members, collected (sorted and written by `JSONOutput.object`).
struct ObjectMembers<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: JSONObjectNode
    var codingPath: [any CodingKey] { [] }

    private func put(_ leaf: PendingJSON, _ key: Key) { node.members.append((key.stringValue, leaf)) }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(try .double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(try .float(value), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.signed(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.signed(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.signed(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.signed(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.signed(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(.unsigned(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { put(.value(value), key) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = JSONObjectNode()
        put(.object(nested), key)
        return KeyedEncodingContainer(ObjectMembers<NestedKey>(node: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = JSONArrayNode()
        put(.array(nested), key)
        return ArrayElements(place: nested, count: { nested.elements.count })
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let slot = JSONSlot()
        put(.slot(slot), key)
        return SlotEncoder(slot: slot)
    }
}

/// An array's elements: written at once (`ValueEncoder`) or collected (`JSONArrayNode`).
struct ArrayElements: UnkeyedEncodingContainer {
    let place: any JSONPlace
    let elementCount: () -> Int
    var codingPath: [any CodingKey] { [] }
    var count: Int { elementCount() }

    init(place: any JSONPlace, count: @escaping () -> Int) {
        self.place = place
        elementCount = count
    }

    mutating func encodeNil() throws { try place.put(.null) }
    mutating func encode(_ value: Bool) throws { try place.put(.bool(value)) }
    mutating func encode(_ value: String) throws { try place.put(.string(value)) }
    mutating func encode(_ value: Double) throws { try place.put(.double(value)) }
    mutating func encode(_ value: Float) throws { try place.put(.float(value)) }
    mutating func encode(_ value: Int) throws { try place.put(.signed(Int64(value))) }
    mutating func encode(_ value: Int8) throws { try place.put(.signed(Int64(value))) }
    mutating func encode(_ value: Int16) throws { try place.put(.signed(Int64(value))) }
    mutating func encode(_ value: Int32) throws { try place.put(.signed(Int64(value))) }
    mutating func encode(_ value: Int64) throws { try place.put(.signed(value)) }
    mutating func encode(_ value: UInt) throws { try place.put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { try place.put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { try place.put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { try place.put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { try place.put(.unsigned(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try place.put(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = JSONObjectNode()
        putNested(.object(nested))
        return KeyedEncodingContainer(ObjectMembers<NestedKey>(node: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = JSONArrayNode()
        putNested(.array(nested))
        return ArrayElements(place: nested, count: { nested.elements.count })
    }

    mutating func superEncoder() -> any Encoder {
        let slot = JSONSlot()
        putNested(.slot(slot))
        return SlotEncoder(slot: slot)
    }

    /// Containers cannot throw here; the output's errors come back from the next element.
    private func putNested(_ element: PendingJSON) {
        if let live = place as? ValueEncoder { try? live.putOpen(element) } else { try? place.put(element) }
    }
}

extension JSONArrayNode: JSONPlace {
    func put(_ leaf: PendingJSON) throws { elements.append(leaf) }
    func put<T: Encodable>(_ value: T) throws { elements.append(.value(value)) }
}

/// What a super-encoder encodes, kept until its turn (an empty object if nothing).
final class JSONSlot: JSONPlace {
    @exclusivity(unchecked) var value: PendingJSON?
    func put(_ leaf: PendingJSON) throws { value = leaf }
    func put<T: Encodable>(_ value: T) throws { self.value = .value(value) }
}

/// A super-encoder's Encoder: it collects into its slot.
final class SlotEncoder: Encoder, SingleValueEncodingContainer {
    let slot: JSONSlot
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(slot: JSONSlot) { self.slot = slot }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object(let node) = slot.value { return KeyedEncodingContainer(ObjectMembers<Key>(node: node)) }
        let node = JSONObjectNode()
        slot.value = .object(node)
        return KeyedEncodingContainer(ObjectMembers<Key>(node: node))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array(let node) = slot.value { return ArrayElements(place: node, count: { node.elements.count }) }
        let node = JSONArrayNode()
        slot.value = .array(node)
        return ArrayElements(place: node, count: { node.elements.count })
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { try slot.put(.null) }
    func encode(_ value: Bool) throws { try slot.put(.bool(value)) }
    func encode(_ value: String) throws { try slot.put(.string(value)) }
    func encode(_ value: Double) throws { try slot.put(.double(value)) }
    func encode(_ value: Float) throws { try slot.put(.float(value)) }
    func encode(_ value: Int) throws { try slot.put(.signed(Int64(value))) }
    func encode(_ value: Int8) throws { try slot.put(.signed(Int64(value))) }
    func encode(_ value: Int16) throws { try slot.put(.signed(Int64(value))) }
    func encode(_ value: Int32) throws { try slot.put(.signed(Int64(value))) }
    func encode(_ value: Int64) throws { try slot.put(.signed(value)) }
    func encode(_ value: UInt) throws { try slot.put(.unsigned(UInt64(value))) }
    func encode(_ value: UInt8) throws { try slot.put(.unsigned(UInt64(value))) }
    func encode(_ value: UInt16) throws { try slot.put(.unsigned(UInt64(value))) }
    func encode(_ value: UInt32) throws { try slot.put(.unsigned(UInt64(value))) }
    func encode(_ value: UInt64) throws { try slot.put(.unsigned(value)) }
    func encode<T: Encodable>(_ value: T) throws { try slot.put(value) }
}
